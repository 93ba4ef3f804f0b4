create materialized view m as select t.s, u.w from t join u on t.k = u.k and t.v < u.w
