create materialized view m as select k from t union all select k from u
