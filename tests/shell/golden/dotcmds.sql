-- .tables .schema .indexes .show .changes .timer .echo .once .output
CREATE TABLE "a b"(x);
CREATE TABLE t1(a INT, b TEXT);
CREATE TABLE abcdefghijklmno(z);
CREATE INDEX i1 ON t1(a);
CREATE VIEW v1 AS SELECT a FROM t1;
.tables
.tables t%
.tables nomatch
.schema t1
.indexes
.changes on
INSERT INTO t1 VALUES(1, 'one'), (2, 'two');
UPDATE t1 SET b = 'uno' WHERE a = 1;
SELECT count(*) FROM t1;
.changes off
.timer on
SELECT 1;
.timer off
.echo on
SELECT 2;
.echo off
.once out.txt
SELECT 'to the file';
SELECT 'to stdout';
.output out2.txt
SELECT 'file 2, first';
SELECT 'file 2, second';
.output stdout
.headers on
.nullvalue -
.width 3 5
.show
.mode
.backend fast
.durability sometimes
.quit
SELECT 'not reached';
