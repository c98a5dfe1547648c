-- derived: sqlite3
-- .dump of tables with quotes, newlines, NULLs and an index; a quoted name
CREATE TABLE t1(a INTEGER PRIMARY KEY, b TEXT, c REAL);
INSERT INTO t1 VALUES(1, 'it''s', 2.5), (2, 'line1
line2', NULL), (3, NULL, -1.0), (4, 'cr'||char(13)||'lf', 0.5);
CREATE TABLE "odd name"(x TEXT);
INSERT INTO "odd name" VALUES('select'), ('');
CREATE INDEX i1 ON t1(b);
.dump
.dump t1
