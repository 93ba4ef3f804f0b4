create materialized view m as select * from (select k, id, row_number() over (partition by k order by w) as rn from u) where rn <= 2
