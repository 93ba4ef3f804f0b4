create materialized view m as select distinct on (k) k, id, w from u order by k, w desc
