-- errors go to stderr in sqlite3's form; processing goes on without -bail
SELECT 1;
SELEC 2;
SELECT * FROM nosuch;
SELECT 3; SELECT x FROM nosuch; SELECT 4;
CREATE TABLE t(a INT);
CREATE TABLE t(a INT);
SELECT 5;
.nosuchcommand
.read does_not_exist.sql
.mode bogus
.headers maybe
.import
SELECT 6;
