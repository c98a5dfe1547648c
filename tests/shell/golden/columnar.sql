-- derived: sqlite3
-- column widths, wrapping, tabs, UTF-8, multi-line cells, .nullvalue
CREATE TABLE w(id INT, name TEXT);
INSERT INTO w VALUES(1, 'short'), (2, 'héllo wörld'), (3, 'tab	here'),
  (4, NULL), (5, 'a much longer value than the others');
.nullvalue <null>
.mode column
SELECT * FROM w;
.width 4 -10
SELECT * FROM w;
.width 0 8
.mode box
SELECT * FROM w;
.mode table
SELECT * FROM w;
.width
.headers off
.mode column
SELECT * FROM w;
.mode markdown
SELECT id, upper(name) AS "Upper Name" FROM w WHERE id < 3;
