-- derived: sqlite3
-- .dump into a file, .read it into a fresh database, .dump again: the same
CREATE TABLE t(a INT, b TEXT, c REAL);
INSERT INTO t VALUES(1, 'quote '' and "double"', 1.25), (NULL, NULL, NULL);
INSERT INTO t VALUES(3, 'multi
line
text', 1e10), (4, 'comma, and tab	', -0.5);
.output dump1.sql
.dump
.output
.open --new copy.db
.read dump1.sql
.mode quote
SELECT * FROM t;
.output dump2.sql
.dump
.output
