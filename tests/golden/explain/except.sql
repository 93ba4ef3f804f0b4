create materialized view m as select k from t except select k from u
