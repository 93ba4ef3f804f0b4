create materialized view m as select count(*) as c, sum(v) as s from t
