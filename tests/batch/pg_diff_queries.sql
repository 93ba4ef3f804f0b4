# One query per line, run on rw and on PostgreSQL over pg_diff_data.sql; results compared as text.
# Without ORDER BY the rows are compared as a multiset. Lines starting with '#' are comments.
# -- projections and integer arithmetic
SELECT id, a, b FROM t_int
SELECT id, a + b, a - b, a * b FROM t_int WHERE id <> 10
SELECT id, a / b, a % b FROM t_int WHERE b <> 0
SELECT id, -a, abs(a), sign(a) FROM t_int
SELECT id, c / 7, c % 7, c * 2 FROM t_int WHERE id <> 3
SELECT id, d + d, d * 2, d / 2 FROM t_int WHERE id <> 3
SELECT 7 / 2, -7 / 2, 7 % 3, -7 % 3, 7 % -3
SELECT 1 + 2 * 3, (1 + 2) * 3, 10 - 2 - 3, 2 ^ 10
SELECT 9 / 3 * 2, 9 / (3 * 2)
SELECT id, a / 2.0 FROM t_int WHERE a IS NOT NULL AND id <> 10
SELECT id, a::numeric / 4 FROM t_int WHERE a IS NOT NULL AND id <> 10
SELECT id, a::float8 / 4 FROM t_int WHERE a IS NOT NULL
SELECT id, a FROM t_int WHERE a > 0 AND b > 0
SELECT id FROM t_int WHERE a BETWEEN -10 AND 10
SELECT id FROM t_int WHERE a NOT BETWEEN -10 AND 10
SELECT id FROM t_int WHERE a IN (1, 3, 7)
SELECT id FROM t_int WHERE a NOT IN (1, 3, 7)
SELECT id FROM t_int WHERE b IN (SELECT a FROM t_int)
SELECT id, greatest(a, b), least(a, b) FROM t_int
SELECT id, greatest(a, b, 0), least(a, b, 0) FROM t_int
SELECT id, a > b, a = b, a <> b, a <= b FROM t_int
SELECT id, c + 1 FROM t_int WHERE id = 3
SELECT 2147483647 + 0, -2147483648 + 0
SELECT 9223372036854775807 - 1
SELECT 5 / 0
SELECT 5 % 0
SELECT 2147483647::int + 1
SELECT 9223372036854775807::bigint + 1
SELECT 32767::smallint + 1::smallint
SELECT a + 1 FROM t_int WHERE id = 10
SELECT 1.0 / 0
SELECT 1.5::float8 / 0
SELECT (-2147483648)::int / -1
SELECT abs(-2147483647), abs(-5::bigint)
SELECT 17 / 5, 17.0 / 5, 17 / 5.0
SELECT 2 ^ 3, 2.0::float8 ^ 0.5, sqrt(16), cbrt(27)
SELECT power(2, 10), mod(17, 5), mod(-17, 5), div(17, 5)
SELECT gcd(12, 18), lcm(4, 6)
SELECT factorial(5)
SELECT 10 & 6, 10 | 6, 10 # 6, ~10, 1 << 4, 256 >> 2
# -- numeric
SELECT id, x FROM t_num
SELECT id, x + 1, x * 2, x - 0.5 FROM t_num
SELECT id, round(x), round(x, 1), trunc(x), trunc(x, 1) FROM t_num
SELECT id, ceil(x), floor(x), abs(x), sign(x) FROM t_num
SELECT round(2.5), round(-2.5), round(3.5), round(0.5), round(-0.5)
SELECT round(2.675, 2), round(1.005, 2), round(-1.005, 2)
SELECT round(1234.5678, -2), round(1234.5678, 0), round(1234.5678, 3)
SELECT trunc(1234.5678, -2), trunc(-1.99), trunc(1.99)
SELECT 0.1 + 0.2, 0.1 + 0.2 = 0.3
SELECT 1.10 + 2.20, 100.00 * 3
SELECT 12345678901234567890 + 1
SELECT 1.5 * 1.5, 2.25 / 1.5
SELECT 10::numeric / 4, 10::numeric % 3, -10::numeric % 3
SELECT x FROM t_num WHERE x > 0.5
SELECT id, x::int, x::bigint FROM t_num WHERE x IS NOT NULL AND id <> 9
SELECT 2.5::int, 3.5::int, -2.5::int, -3.5::int
SELECT 2.5::numeric::int, 0.5::numeric::int
SELECT '12.50'::numeric + 1
SELECT 1e3, 1.5e2, 2e-3
SELECT sqrt(2::float8), power(2::float8, 0.5::float8)
SELECT ceil(-0.5), floor(-0.5), ceil(0.5), floor(0.5)
SELECT min(x), max(x), sum(x) FROM t_num
SELECT count(x), count(*), count(DISTINCT x) FROM t_num
SELECT 'abc'::numeric
SELECT 1::numeric / 0
# -- floats
SELECT id, f, r FROM t_num
SELECT id, f * 2, f / 3, f + r FROM t_num
SELECT 0.1::float8 + 0.2::float8
SELECT 1.0::float8 / 3
SELECT 1e20::float8, 1e-7::float8, 123456789012345.0::float8, 1234567890123456.0::float8
SELECT 100000::float8, 1e15::float8, 1e16::float8
SELECT 'Infinity'::float8, '-Infinity'::float8, 'NaN'::float8
SELECT 'inf'::float8 > 1e308, 'NaN'::float8 = 'NaN'::float8, 'NaN'::float8 > 1
SELECT 'Infinity'::float8 + 1, 'Infinity'::float8 - 'Infinity'::float8
SELECT round(2.5::float8), round(3.5::float8), round(-2.5::float8)
SELECT ceil(1.2::float8), floor(-1.2::float8), trunc(-1.7::float8)
SELECT 3.25::real, 0.1::real, 1e10::real, 16777217::real
SELECT (1.0::float8 / 3)::real
SELECT f::int FROM t_num WHERE f IS NOT NULL AND id <> 9
SELECT sqrt(2::float8), exp(1::float8), ln(10::float8), log(100::float8), log10(1000::float8)
SELECT sin(0::float8), cos(0::float8), pi()
SELECT -0.0::float8, 0.0::float8 * -1
SELECT f FROM t_num ORDER BY f NULLS FIRST
SELECT sum(f), avg(f), min(r), max(r) FROM t_num WHERE id <> 9
SELECT 1.5::float8::numeric, 0.1::float8::numeric
SELECT 1::float4 / 3
# -- casts and literals
SELECT '42'::int, '-7'::bigint, '3'::smallint
SELECT ' 42 '::int
SELECT 'abc'::int
SELECT '2147483648'::int
SELECT 42::varchar, 4.5::varchar, true::varchar
SELECT 1::boolean, 0::boolean
SELECT 'true'::boolean, 'f'::boolean, 'yes'::boolean, 'off'::boolean, ' TRUE '::boolean
SELECT 'maybe'::boolean
SELECT '2024-01-15'::date, '2024-01-15 10:00:00'::timestamp
SELECT '1 day 2 hours'::interval, '90 minutes'::interval
SELECT CAST(3.7 AS int), CAST('5' AS numeric), CAST(5 AS float8)
SELECT 1.0::float8::varchar, 0.5::float8::text, 1e20::float8::text
SELECT 10::varchar || 'x', 'x' || 10
SELECT 'abc' || NULL, NULL || 'abc'
SELECT TRUE AND NULL, FALSE AND NULL, TRUE OR NULL, FALSE OR NULL, NOT NULL::boolean
SELECT 123::text::int + 1
# -- booleans
SELECT id, active FROM emp
SELECT id, active IS TRUE, active IS NOT TRUE, active IS FALSE, active IS NULL FROM emp
SELECT id, NOT active FROM emp
SELECT count(*) FILTER (WHERE active) FROM emp
SELECT bool_and(active), bool_or(active), every(active) FROM emp
SELECT id FROM emp WHERE active
SELECT id FROM emp WHERE NOT active
SELECT id, active = true, active <> false FROM emp
SELECT true > false, true < false
# -- NULL handling
SELECT id, coalesce(a, b, 0) FROM t_int
SELECT id, nullif(a, b), nullif(a, 3) FROM t_int
SELECT id, a IS NULL, a IS NOT NULL FROM t_int
SELECT id, a IS DISTINCT FROM b, a IS NOT DISTINCT FROM b FROM t_int
SELECT id FROM t_int WHERE a = NULL
SELECT id FROM t_int WHERE a <> 5
SELECT NULL = NULL, NULL IS NULL, NULL::int + 1
SELECT id, CASE WHEN a > 0 THEN 'pos' WHEN a < 0 THEN 'neg' WHEN a = 0 THEN 'zero' ELSE 'null' END FROM t_int
SELECT id, CASE a WHEN 1 THEN 'one' WHEN 7 THEN 'seven' END FROM t_int
SELECT id, CASE WHEN b IS NULL THEN 0 ELSE a END FROM t_int
SELECT count(a), count(b), count(*) FROM t_int
SELECT sum(a), avg(b) FROM t_int WHERE a IS NULL
SELECT id FROM t_int WHERE a NOT IN (1, NULL)
SELECT id FROM t_int WHERE a IN (1, NULL)
SELECT max(a) FROM t_int WHERE false
SELECT count(*) FROM t_int WHERE false
SELECT coalesce(NULL, NULL, 'x'), coalesce(NULL::int, 5)
SELECT a FROM t_int ORDER BY a
SELECT a FROM t_int ORDER BY a DESC
SELECT a FROM t_int ORDER BY a NULLS FIRST
SELECT a FROM t_int ORDER BY a DESC NULLS LAST
SELECT b, a FROM t_int ORDER BY b, a
SELECT b, a FROM t_int ORDER BY b DESC, a DESC
SELECT s FROM t_str ORDER BY s
SELECT s FROM t_str ORDER BY s DESC NULLS LAST
# -- strings
SELECT id, upper(s), lower(s), length(s) FROM t_str
SELECT id, char_length(s), octet_length(s) FROM t_str
SELECT id, s || '-' || t FROM t_str
SELECT id, concat(s, '-', t), concat_ws('|', s, t, NULL) FROM t_str
SELECT id, substring(s, 2, 3), substring(s FROM 2), substr(s, 3) FROM t_str
SELECT id, position('l' IN s), strpos(s, 'b') FROM t_str
SELECT id, replace(s, 'l', 'L'), translate(s, 'abc', 'xyz') FROM t_str
SELECT id, trim(s), ltrim(s), rtrim(s), btrim(s) FROM t_str
SELECT trim(both 'x' from 'xxhixx'), trim(leading 'x' from 'xxhixx'), trim(trailing 'x' from 'xxhixx')
SELECT id, lpad(s, 8, '*'), rpad(s, 8, '*') FROM t_str
SELECT lpad('hello', 3), rpad('hello', 3), lpad('hi', 5)
SELECT id, left(s, 2), right(s, 2) FROM t_str
SELECT left('hello', -2), right('hello', -2)
SELECT id, reverse(s), repeat(s, 2) FROM t_str
SELECT id, initcap(s) FROM t_str
SELECT id, split_part(s, ',', 2), split_part(s, ' ', 1) FROM t_str
SELECT id FROM t_str WHERE s LIKE 'h%'
SELECT id FROM t_str WHERE s ILIKE 'h%'
SELECT id FROM t_str WHERE s LIKE '%b_'
SELECT id FROM t_str WHERE s NOT LIKE '%a%'
SELECT id FROM t_str WHERE s SIMILAR TO '(a|h)%'
SELECT id, s ~ '^[a-z]+$', s ~* '^h' FROM t_str
SELECT id, regexp_replace(s, '[aeiou]', '_'), regexp_replace(s, '[aeiou]', '_', 'g') FROM t_str
SELECT md5('hello'), md5('')
SELECT ascii('A'), chr(66)
SELECT starts_with('hello', 'he'), 'abc' < 'abd', 'B' < 'a'
SELECT 'a' || 'b' || 'c', 'x' || 1 || true
SELECT to_hex(255), to_hex(-1)
SELECT length(''), length(' '), '' IS NULL
SELECT overlay('Txxxxas' placing 'hom' from 2 for 4)
SELECT quote_ident('abc'), quote_literal('it''s')
SELECT 'O''Reilly', E'a\tb' = 'a' || chr(9) || 'b'
SELECT string_agg(name, ',' ORDER BY name) FROM emp
SELECT dept_id, string_agg(name, ';' ORDER BY id) FROM emp GROUP BY dept_id
SELECT s, count(*) FROM t_str GROUP BY s
SELECT min(s), max(s) FROM t_str
SELECT upper(NULL), length(NULL)
SELECT substring('hello', 0, 2), substring('hello', -1, 3)
SELECT lower('ÜBER'), upper('éa')
SELECT regexp_match('foobarbequebaz', 'ba.'), regexp_split_to_array('a1b2c', '[0-9]')
# -- dates and times
SELECT id, d, ts, iv FROM t_time
SELECT id, d + 1, d - 1, d + 30 FROM t_time
SELECT id, d - '2000-01-01'::date FROM t_time
SELECT id, ts + iv, ts - iv FROM t_time
SELECT id, d + iv FROM t_time
SELECT id, ts + interval '1 hour', ts - interval '1 day' FROM t_time
SELECT id, extract(year FROM ts), extract(month FROM ts), extract(day FROM ts) FROM t_time
SELECT id, extract(hour FROM ts), extract(minute FROM ts), extract(second FROM ts) FROM t_time
SELECT id, extract(dow FROM d), extract(doy FROM d), extract(week FROM d), extract(quarter FROM d) FROM t_time
SELECT id, extract(epoch FROM ts) FROM t_time
SELECT id, date_part('year', ts), date_part('month', d) FROM t_time
SELECT id, date_trunc('month', ts), date_trunc('day', ts), date_trunc('hour', ts) FROM t_time
SELECT id, date_trunc('year', ts), date_trunc('week', ts), date_trunc('quarter', ts) FROM t_time
SELECT id, to_char(ts, 'YYYY-MM-DD HH24:MI:SS') FROM t_time
SELECT id, to_char(d, 'YYYY/MM/DD'), to_char(ts, 'HH12:MI AM') FROM t_time
SELECT id, to_char(ts, 'Mon DD, YYYY'), to_char(ts, 'YY-MM') FROM t_time WHERE id <> 4
SELECT to_date('2024-03-05', 'YYYY-MM-DD'), to_date('05/03/2024', 'DD/MM/YYYY')
SELECT to_timestamp('2024-03-05 10:11:12', 'YYYY-MM-DD HH24:MI:SS')
SELECT make_date(2024, 2, 29), make_time(10, 30, 0)
SELECT '2024-01-31'::date + interval '1 month'
SELECT '2024-03-31'::timestamp - interval '1 month'
SELECT interval '1 day' + interval '2 hours', interval '1 hour' * 3, interval '3 hours' / 2
SELECT interval '1 month' - interval '1 day', -interval '1 day'
SELECT interval '25 hours', interval '36 months', interval '1.5 days'
SELECT interval '1 year 2 months 3 days 04:05:06.789'
SELECT interval '-1 year -2 months +3 days'
SELECT interval '0 seconds', interval '-1 second'
SELECT id, iv * 2, iv / 2 FROM t_time
SELECT justify_hours(interval '27 hours'), justify_days(interval '35 days')
SELECT age('2024-01-15'::timestamp, '2023-10-01'::timestamp)
SELECT '2024-01-15 10:00:00'::timestamp - '2024-01-14 08:30:00'::timestamp
SELECT '2024-02-28'::date + 1, '2023-02-28'::date + 1
SELECT date '2024-01-15' < date '2024-02-01', timestamp '2024-01-01 00:00:00' = date '2024-01-01'
SELECT d FROM t_time ORDER BY d
SELECT ts FROM t_time ORDER BY ts DESC
SELECT min(d), max(ts) FROM t_time
SELECT extract(year FROM d), count(*) FROM t_time GROUP BY 1
SELECT '10:30:00'::time, '10:30:00'::time + interval '45 minutes'
SELECT '2024-01-15 10:30:00+02'::timestamptz
SELECT '2024-01-15 10:30:00'::timestamptz + interval '1 day'
SELECT extract(epoch FROM '2024-01-15 10:30:00+00'::timestamptz)
SELECT date_trunc('day', '2024-01-15 10:30:00+00'::timestamptz)
SELECT '2024-01-15'::date::timestamp, '2024-01-15 10:30:00'::timestamp::date
SELECT '2024-13-01'::date
SELECT generate_series('2024-01-01'::timestamp, '2024-01-03'::timestamp, interval '1 day')
# -- aggregates
SELECT count(*), sum(a), min(a), max(a) FROM t_int
SELECT sum(c) FROM t_int WHERE id <> 3
SELECT sum(d), sum(a) FROM t_int WHERE id <> 10
SELECT avg(a)::numeric(10, 4) FROM t_int WHERE id <> 10
SELECT round(avg(salary), 2) FROM emp
SELECT dept_id, count(*), sum(salary), min(salary), max(salary) FROM emp GROUP BY dept_id
SELECT dept_id, round(avg(salary), 3) FROM emp GROUP BY dept_id
SELECT dept_id, count(*) FROM emp GROUP BY dept_id HAVING count(*) > 1
SELECT dept_id, sum(salary) FROM emp GROUP BY dept_id HAVING sum(salary) > 200 ORDER BY dept_id
SELECT count(DISTINCT dept_id), count(DISTINCT salary), count(dept_id) FROM emp
SELECT sum(DISTINCT salary) FROM emp
SELECT dept_id, max(name), min(name) FROM emp GROUP BY dept_id
SELECT active, count(*) FROM emp GROUP BY active
SELECT salary, count(*) FROM emp GROUP BY salary ORDER BY count(*) DESC, salary
SELECT dept_id, count(*) FILTER (WHERE salary > 100) FROM emp GROUP BY dept_id
SELECT dept_id, sum(salary) FILTER (WHERE active) FROM emp GROUP BY dept_id
SELECT stddev_samp(salary)::numeric(10,4), var_samp(salary)::numeric(12,4) FROM emp
SELECT stddev_pop(salary)::numeric(10,4), var_pop(salary)::numeric(12,4) FROM emp
SELECT array_agg(id ORDER BY id) FROM emp
SELECT dept_id, array_agg(salary ORDER BY salary DESC, id) FROM emp GROUP BY dept_id
SELECT count(*) FROM (SELECT DISTINCT dept_id FROM emp) s
SELECT DISTINCT dept_id FROM emp
SELECT DISTINCT salary, active FROM emp
SELECT DISTINCT ON (dept_id) dept_id, name FROM emp ORDER BY dept_id, salary DESC, id
SELECT b % 2, sum(a) FROM t_int GROUP BY b % 2
SELECT a > 0, count(*) FROM t_int GROUP BY a > 0
SELECT dept_id, salary, count(*) FROM emp GROUP BY GROUPING SETS ((dept_id), (salary))
SELECT dept_id, active, count(*) FROM emp GROUP BY ROLLUP (dept_id, active)
SELECT dept_id, active, sum(salary) FROM emp GROUP BY CUBE (dept_id, active)
SELECT dept_id, grouping(dept_id), count(*) FROM emp GROUP BY ROLLUP (dept_id)
SELECT max(salary) - min(salary) FROM emp
SELECT sum(salary) / count(*) FROM emp
SELECT count(*) FROM emp HAVING count(*) > 100
SELECT bit_and(a), bit_or(a) FROM t_int WHERE a > 0
SELECT sum(x), avg(x)::numeric(20,6) FROM t_num
SELECT sum(r) FROM t_num WHERE id < 5
SELECT min(active::int), max(active::int) FROM emp
SELECT sum(a::bigint) FROM t_int
# -- joins
SELECT e.name, d.name FROM emp e JOIN dept d ON e.dept_id = d.id
SELECT e.name, d.name FROM emp e LEFT JOIN dept d ON e.dept_id = d.id
SELECT e.name, d.name FROM emp e RIGHT JOIN dept d ON e.dept_id = d.id
SELECT e.name, d.name FROM emp e FULL JOIN dept d ON e.dept_id = d.id
SELECT e.name, d.name FROM emp e CROSS JOIN dept d WHERE d.id < 3
SELECT count(*) FROM emp, dept
SELECT e.name, d.name FROM emp e, dept d WHERE e.dept_id = d.id AND e.salary > 100
SELECT e.name, m.name FROM emp e JOIN emp m ON e.manager_id = m.id
SELECT e.name, m.name FROM emp e LEFT JOIN emp m ON e.manager_id = m.id
SELECT e.name, d.name FROM emp e JOIN dept d ON e.dept_id = d.id AND d.name <> 'eng'
SELECT e.name, d.name FROM emp e LEFT JOIN dept d ON e.dept_id = d.id AND e.salary > 100
SELECT e.name FROM emp e JOIN dept d ON e.dept_id > d.id WHERE d.id = 2
SELECT d.name, count(e.id) FROM dept d LEFT JOIN emp e ON e.dept_id = d.id GROUP BY d.name
SELECT d.name, coalesce(sum(e.salary), 0) FROM dept d LEFT JOIN emp e ON e.dept_id = d.id GROUP BY d.name
SELECT e.name, d.name, m.name FROM emp e JOIN dept d ON e.dept_id = d.id LEFT JOIN emp m ON e.manager_id = m.id
SELECT * FROM dept d1 JOIN dept d2 USING (id)
SELECT id, name FROM dept NATURAL JOIN (SELECT id, name FROM dept WHERE id < 3) s
SELECT a.id, b.id FROM t_int a JOIN t_int b ON a.a = b.b
SELECT a.id, b.id FROM t_int a LEFT JOIN t_int b ON a.a = b.b
SELECT a.id, b.id FROM t_int a FULL JOIN t_int b ON a.a = b.b
SELECT t1.id, t2.id FROM t_int t1 JOIN t_num t2 ON t1.a = t2.x
SELECT t1.id, t2.s FROM t_int t1 JOIN t_str t2 ON t1.a::varchar = t2.s
SELECT count(*) FROM t_int a JOIN t_int b ON a.a < b.a
SELECT e.name, d.name FROM emp e FULL JOIN dept d ON e.dept_id = d.id WHERE e.id IS NULL OR d.id IS NULL
SELECT e.name FROM emp e LEFT JOIN dept d ON e.dept_id = d.id WHERE d.id IS NULL
SELECT d.name FROM dept d WHERE NOT EXISTS (SELECT 1 FROM emp e WHERE e.dept_id = d.id)
SELECT d.name FROM dept d WHERE EXISTS (SELECT 1 FROM emp e WHERE e.dept_id = d.id AND e.salary > 100)
SELECT * FROM (VALUES (1, 'a'), (2, 'b')) v(x, y) JOIN dept ON dept.id = v.x
# -- subqueries
SELECT name FROM emp WHERE salary > (SELECT avg(salary) FROM emp)
SELECT name, (SELECT name FROM dept WHERE dept.id = emp.dept_id) FROM emp
SELECT name FROM emp WHERE dept_id IN (SELECT id FROM dept WHERE name LIKE 's%')
SELECT name FROM emp WHERE dept_id NOT IN (SELECT id FROM dept WHERE id > 2)
SELECT name FROM emp WHERE dept_id NOT IN (SELECT dept_id FROM emp WHERE id > 5)
SELECT name FROM emp e WHERE salary = (SELECT max(salary) FROM emp e2 WHERE e2.dept_id = e.dept_id)
SELECT name FROM emp e WHERE salary > ALL (SELECT salary FROM emp WHERE dept_id = 2)
SELECT name FROM emp e WHERE salary < ANY (SELECT salary FROM emp WHERE dept_id = 2)
SELECT (SELECT count(*) FROM emp), (SELECT max(id) FROM dept)
SELECT * FROM (SELECT dept_id, sum(salary) AS total FROM emp GROUP BY dept_id) s WHERE total > 150
SELECT dept_id, total FROM (SELECT dept_id, sum(salary) AS total FROM emp GROUP BY dept_id) s ORDER BY total DESC, dept_id
SELECT name FROM emp WHERE EXISTS (SELECT 1 FROM emp m WHERE m.manager_id = emp.id)
SELECT name, (SELECT count(*) FROM emp r WHERE r.manager_id = e.id) FROM emp e
SELECT (SELECT id FROM dept WHERE id = 99)
SELECT (SELECT id FROM dept)
SELECT name FROM emp WHERE (dept_id, salary) IN (SELECT dept_id, max(salary) FROM emp GROUP BY dept_id)
SELECT max(cnt) FROM (SELECT count(*) AS cnt FROM emp GROUP BY dept_id) t
SELECT e.name FROM emp e WHERE e.salary > (SELECT avg(salary) FROM emp WHERE dept_id = e.dept_id)
SELECT id FROM t_int WHERE a > (SELECT min(b) FROM t_int)
# -- CTEs
WITH d AS (SELECT * FROM dept WHERE id < 3) SELECT name FROM d
WITH s AS (SELECT dept_id, sum(salary) AS total FROM emp GROUP BY dept_id) SELECT d.name, s.total FROM s JOIN dept d ON d.id = s.dept_id
WITH a AS (SELECT 1 AS x), b AS (SELECT x + 1 AS y FROM a) SELECT * FROM a, b
WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 10) SELECT sum(n) FROM r
WITH RECURSIVE chain(id, name, depth) AS (SELECT id, name, 0 FROM emp WHERE manager_id IS NULL UNION ALL SELECT e.id, e.name, c.depth + 1 FROM emp e JOIN chain c ON e.manager_id = c.id) SELECT name, depth FROM chain
WITH t AS (SELECT a FROM t_int WHERE a > 0) SELECT count(*), sum(a) FROM t
WITH t AS (SELECT * FROM emp) SELECT dept_id, count(*) FROM t GROUP BY dept_id
# -- window functions
SELECT name, salary, row_number() OVER (ORDER BY salary DESC, id) FROM emp
SELECT name, salary, rank() OVER (ORDER BY salary DESC) FROM emp
SELECT name, salary, dense_rank() OVER (ORDER BY salary DESC) FROM emp
SELECT name, dept_id, row_number() OVER (PARTITION BY dept_id ORDER BY salary DESC, id) FROM emp
SELECT name, dept_id, sum(salary) OVER (PARTITION BY dept_id) FROM emp
SELECT name, sum(salary) OVER (ORDER BY id) FROM emp
SELECT name, sum(salary) OVER (ORDER BY salary) FROM emp
SELECT name, sum(salary) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM emp
SELECT name, avg(salary) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)::numeric(10,2) FROM emp
SELECT name, lag(salary) OVER (ORDER BY id), lead(salary) OVER (ORDER BY id) FROM emp
SELECT name, lag(salary, 2, 0) OVER (ORDER BY id), lead(name, 1, 'none') OVER (ORDER BY id) FROM emp
SELECT name, first_value(name) OVER (PARTITION BY dept_id ORDER BY id), last_value(name) OVER (PARTITION BY dept_id ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM emp
SELECT name, ntile(3) OVER (ORDER BY id) FROM emp
SELECT name, count(*) OVER (PARTITION BY dept_id) FROM emp
SELECT name, max(salary) OVER (PARTITION BY active) FROM emp
SELECT name, percent_rank() OVER (ORDER BY salary), cume_dist() OVER (ORDER BY salary) FROM emp
SELECT name, nth_value(name, 2) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM emp
SELECT * FROM (SELECT name, dept_id, row_number() OVER (PARTITION BY dept_id ORDER BY salary DESC, id) AS rn FROM emp) t WHERE rn = 1
SELECT dept_id, sum(salary), rank() OVER (ORDER BY sum(salary) DESC) FROM emp GROUP BY dept_id
SELECT id, a, sum(a) OVER (ORDER BY id RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM t_int
SELECT id, min(a) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM t_int
SELECT id, row_number() OVER w, sum(a) OVER w FROM t_int WINDOW w AS (ORDER BY id)
# -- set operations
SELECT dept_id FROM emp UNION SELECT id FROM dept
SELECT dept_id FROM emp UNION ALL SELECT id FROM dept
SELECT dept_id FROM emp INTERSECT SELECT id FROM dept
SELECT id FROM dept EXCEPT SELECT dept_id FROM emp
SELECT salary FROM emp INTERSECT ALL SELECT salary FROM emp WHERE dept_id = 2
SELECT salary FROM emp EXCEPT ALL SELECT salary FROM emp WHERE dept_id = 1
SELECT 1 UNION SELECT 2 UNION SELECT 1
SELECT a FROM t_int UNION SELECT b FROM t_int ORDER BY 1
SELECT name FROM emp WHERE id < 3 UNION ALL SELECT name FROM dept ORDER BY 1 LIMIT 4
(SELECT id FROM emp ORDER BY id LIMIT 2) UNION ALL (SELECT id FROM dept ORDER BY id DESC LIMIT 2)
SELECT 1, 'a' UNION ALL SELECT 2, 'b' EXCEPT SELECT 1, 'a'
# -- LIMIT / OFFSET / FETCH / VALUES / generate_series / unnest / arrays
SELECT id FROM emp ORDER BY id LIMIT 3
SELECT id FROM emp ORDER BY id LIMIT 3 OFFSET 2
SELECT id FROM emp ORDER BY id OFFSET 6
SELECT id FROM emp ORDER BY id FETCH FIRST 2 ROWS ONLY
SELECT id FROM emp ORDER BY salary DESC, id LIMIT 1
SELECT id FROM emp ORDER BY id LIMIT 0
VALUES (1, 'x'), (2, 'y'), (3, NULL)
SELECT * FROM (VALUES (1), (NULL), (3)) v(a) ORDER BY a
SELECT x, x * x FROM (VALUES (1), (2), (3)) v(x)
SELECT * FROM generate_series(1, 5)
SELECT * FROM generate_series(10, 1, -3)
SELECT g, g % 2 FROM generate_series(0, 6) g
SELECT sum(g) FROM generate_series(1, 100) g
SELECT generate_series(1, 3)
SELECT * FROM unnest(ARRAY[3, 1, 2]) u
SELECT unnest(ARRAY['a', 'b'])
SELECT ARRAY[1, 2, 3], ARRAY['a', 'b'], ARRAY[1, NULL]
SELECT (ARRAY[10, 20, 30])[2], (ARRAY[10, 20, 30])[5]
SELECT array_length(ARRAY[1, 2, 3], 1), cardinality(ARRAY[1, 2])
SELECT ARRAY[1, 2] || ARRAY[3], array_append(ARRAY[1], 2), array_prepend(0, ARRAY[1])
SELECT array_position(ARRAY['a', 'b', 'c'], 'b'), array_remove(ARRAY[1, 2, 1], 1)
SELECT 2 = ANY(ARRAY[1, 2, 3]), 5 = ANY(ARRAY[1, 2, 3]), 5 > ALL(ARRAY[1, 2, 3])
SELECT array_to_string(ARRAY[1, 2, 3], '-'), string_to_array('a-b-c', '-')
SELECT ARRAY[ARRAY[1, 2], ARRAY[3, 4]]
SELECT array_cat(ARRAY[1, 2], ARRAY[3, 4]), ARRAY[1, 2] = ARRAY[1, 2]
SELECT ARRAY['a b', '', 'c"d', NULL]
SELECT array_agg(x ORDER BY x) FROM (VALUES (3), (1), (2)) v(x)
SELECT ROW(1, 'a')
SELECT id, ARRAY[a, b] FROM t_int WHERE id < 4
# -- jsonb
SELECT '{"a": 1, "b": [1, 2]}'::jsonb -> 'a', '{"a": 1}'::jsonb ->> 'a'
SELECT '{"a": {"b": "x"}}'::jsonb -> 'a' ->> 'b'
SELECT '[10, 20, 30]'::jsonb -> 1, '[10, 20, 30]'::jsonb ->> 2
SELECT ('{"a": 1}'::jsonb -> 'a')::text, '{"a": [1, 2]}'::jsonb -> 'a' -> 0
SELECT '{"a": 1, "b": 2}'::jsonb @> '{"a": 1}'::jsonb
SELECT jsonb_typeof('{"a": 1}'::jsonb), jsonb_typeof('[1]'::jsonb), jsonb_typeof('1'::jsonb)
SELECT jsonb_array_length('[1, 2, 3]'::jsonb)
SELECT '{"b": 1, "a": 2}'::jsonb
SELECT '[1, "a", null, true]'::jsonb
# -- miscellaneous expressions
SELECT id, a, b, CASE WHEN a > b THEN a ELSE b END FROM t_int
SELECT id, coalesce(a, 0) + coalesce(b, 0) FROM t_int
SELECT 1 WHERE 1 = 1
SELECT 1 WHERE 1 = 0
SELECT count(*) FROM t_int WHERE a > 0 OR b > 3
SELECT count(*) FROM t_int WHERE NOT (a > 0 AND b > 0)
SELECT id FROM t_int WHERE a + b > 5 AND a - b < 20
SELECT 'x' AS col, 1 AS num
SELECT name FROM emp ORDER BY length(name), name
SELECT name FROM emp ORDER BY 1 DESC LIMIT 3
SELECT upper(name) AS u FROM emp ORDER BY u
SELECT dept_id AS d, count(*) AS n FROM emp GROUP BY d ORDER BY n DESC, d
SELECT id, a FROM t_int ORDER BY abs(a) NULLS FIRST, id
SELECT typeof_check FROM (SELECT 1 AS typeof_check) t
SELECT * FROM emp WHERE name = 'alice'
SELECT * FROM emp WHERE id = 3
SELECT name, salary FROM emp WHERE id IN (2, 4, 99)
SELECT * FROM dept WHERE id = 4
SELECT * FROM emp WHERE id = 100
SELECT count(*) FROM emp WHERE id = 1 AND salary = 200
# -- views (defined in the data script on both sides)
SELECT * FROM v_rich
SELECT * FROM v_dept_total ORDER BY total DESC, dept
SELECT r.name, t.total FROM v_rich r JOIN v_dept_total t ON t.dept = r.dept
SELECT dept FROM v_dept_total WHERE n > 1
WITH v_rich AS (SELECT 1 AS x) SELECT * FROM v_rich
# -- more intervals
SELECT interval '3 days' / 16384, interval '00:00:00.000005' / 2, interval '1 day' / 3
SELECT interval '1 month' * 1.5, interval '1 day' * 0.3, 2 * interval '1 hour 30 minutes'
SELECT sum(iv) FROM t_time
SELECT interval '@ 2 hours', interval 'P1Y2M3DT4H5M6S', interval '-1 day +02:00:00', interval '1 day ago'
SELECT '1.5 months'::interval, '0.5 years'::interval, '-1.25 days'::interval
