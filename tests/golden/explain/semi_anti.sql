create materialized view m as select id from u where k in (select k from t) and not exists (select 1 from t where t.v = u.w)
