create materialized view m as select t.s, u.w from t full join u on t.k = u.k
