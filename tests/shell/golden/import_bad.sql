-- bad CSV: ragged rows, broken quoting; an error naming the line, nothing
-- imported (one transaction).  The inputs are written with .once.
CREATE TABLE t(a TEXT, b TEXT);
.once ragged.txt
SELECT 'x,y' || char(10) || 'p,q' || char(10) || 'only one' || char(10) || 'r,s';
.once quotes.txt
SELECT 'x,y' || char(10) || '"open,q' || char(10) || 'z,w';
.once quotes2.txt
SELECT 'x,y' || char(10) || '"a"b,c';
.once good.txt
SELECT 'x,y' || char(10) || '"multi' || char(10) || 'line",' || char(10) || ',""';
.import --csv ragged.txt t
.import --csv quotes.txt t
.import --csv quotes2.txt t
.import --csv missing.txt t
.import --csv
.import --bogus a b
SELECT count(*) FROM t;
.import --csv good.txt t
.mode quote
SELECT * FROM t;
