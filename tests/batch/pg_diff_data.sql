CREATE TABLE t_int (id int PRIMARY KEY, a int, b int, c bigint, d smallint);
INSERT INTO t_int VALUES
  (1, 1, 2, 10, 1), (2, -7, 2, -100, -3), (3, 7, -2, 9223372036854775000, 32000),
  (4, 0, 5, 0, 0), (5, NULL, 3, NULL, NULL), (6, 15, NULL, 42, 7), (7, -15, 4, -42, -7),
  (8, 100, 7, 1000000, 100), (9, 3, 3, 3, 3), (10, 2147483647, 1, 5, 2);

CREATE TABLE t_num (id int PRIMARY KEY, x numeric, f double precision, r real);
INSERT INTO t_num VALUES
  (1, 1.5, 1.5, 1.5), (2, -2.5, -2.5, -2.5), (3, 0.1, 0.1, 0.1), (4, 123.456, 123.456, 123.456),
  (5, NULL, NULL, NULL), (6, 0, 0, 0), (7, 2.675, 2.675, 2.675), (8, -0.5, -0.5, -0.5),
  (9, 1000000, 1e20, 1e10), (10, 0.001, 1e-7, 3.25);

CREATE TABLE t_str (id int PRIMARY KEY, s varchar, t varchar);
INSERT INTO t_str VALUES
  (1, 'hello', 'world'), (2, 'Hello World', 'x'), (3, '', 'empty'), (4, NULL, 'null'),
  (5, '  padded  ', 'pad'), (6, 'a,b,c', ','), (7, 'MiXeD CaSe', 'mixed'), (8, 'abcabc', 'bc'),
  (9, 'über', 'utf8'), (10, '123', 'digits');

CREATE TABLE t_time (id int PRIMARY KEY, d date, ts timestamp, iv interval);
INSERT INTO t_time VALUES
  (1, '2024-01-15', '2024-01-15 10:30:00', '1 day'),
  (2, '2023-12-31', '2023-12-31 23:59:59.5', '2 hours 30 minutes'),
  (3, '2024-02-29', '2024-02-29 00:00:00', '1 month'),
  (4, NULL, NULL, NULL),
  (5, '2000-01-01', '2000-01-01 12:00:00.123456', '-3 days'),
  (6, '1999-12-31', '1999-12-31 06:07:08', '1 year 2 months 3 days 04:05:06');

CREATE TABLE dept (id int PRIMARY KEY, name varchar);
INSERT INTO dept VALUES (1, 'eng'), (2, 'sales'), (3, 'ops'), (4, 'empty');

CREATE TABLE emp (id int PRIMARY KEY, name varchar, dept_id int, salary int, manager_id int, active boolean);
INSERT INTO emp VALUES
  (1, 'alice', 1, 200, NULL, true), (2, 'bob', 1, 150, 1, true), (3, 'carol', 2, 120, 1, false),
  (4, 'dave', 2, 120, 3, true), (5, 'erin', 3, 90, 1, NULL), (6, 'frank', NULL, 80, 2, true),
  (7, 'grace', 1, 150, 2, false), (8, 'heidi', 5, 60, 4, true);

CREATE VIEW v_rich AS SELECT e.name, d.name AS dept, e.salary FROM emp e JOIN dept d ON e.dept_id = d.id WHERE e.salary >= 120;
CREATE VIEW v_dept_total AS SELECT dept, sum(salary) AS total, count(*) AS n FROM v_rich GROUP BY dept;
