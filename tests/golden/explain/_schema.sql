create table t (k int, v int, s varchar);
create table u (id int primary key, k int, w int);
create table bid (auction int, price int, date_time timestamp);
