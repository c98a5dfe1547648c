-- derived: sqlite3
-- every output mode on the same rows: NULLs, quotes, separators, newlines
CREATE TABLE t(a INT, b TEXT, c REAL);
INSERT INTO t VALUES(1, 'x"y', 1.5), (NULL, 'a,b', 0.25), (22, NULL, 3.0);
INSERT INTO t VALUES(-7, 'it''s', -2.5), (0, 'two
lines', 100.0), (5, '', 0.1);
.mode list
SELECT * FROM t;
.headers on
SELECT * FROM t;
.mode csv
SELECT * FROM t;
.mode tabs
SELECT * FROM t;
.mode column
SELECT * FROM t;
.mode box
SELECT * FROM t;
.mode table
SELECT * FROM t;
.mode markdown
SELECT * FROM t;
.mode json
SELECT * FROM t;
.mode line
SELECT * FROM t;
.mode insert
SELECT * FROM t;
.mode insert t2
SELECT * FROM t;
.headers off
SELECT * FROM t;
.mode quote
SELECT * FROM t;
.mode csv
SELECT * FROM t;
.mode list
SELECT * FROM t WHERE a > 100;
.mode box
SELECT * FROM t WHERE a > 100;
.mode json
SELECT * FROM t WHERE a > 100;
