create materialized view m as select k, count(distinct v) as dv, string_agg(s, ',' order by s) as ss from t group by k
