create materialized view m as select auction, price from bid where date_time > now() - interval '1 hour'
