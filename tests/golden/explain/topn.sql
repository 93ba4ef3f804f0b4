create materialized view m as select id, w from u order by w desc limit 3
