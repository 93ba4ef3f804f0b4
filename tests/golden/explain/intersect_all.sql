create materialized view m as select k from t intersect all select k from u
