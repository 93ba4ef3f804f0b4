create materialized view m as select auction, window_start, count(*) as c from hop(bid, date_time, interval '2' second, interval '10' second) group by auction, window_start
