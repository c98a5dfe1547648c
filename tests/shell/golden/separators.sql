-- derived: sqlite3
-- .separator in list and csv modes, .nullvalue, quoting of the separator
CREATE TABLE s(a TEXT, b TEXT);
INSERT INTO s VALUES('p;q', 'r'), (NULL, 's|t'), ('u', 'v w');
.separator ;
SELECT * FROM s;
.nullvalue NULL
.separator , "\n--\n"
SELECT * FROM s;
.mode csv
.separator ;
SELECT * FROM s;
.mode list
SELECT * FROM s;
.mode tabs
SELECT * FROM s;
