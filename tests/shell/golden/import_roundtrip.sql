-- .import/.export round trip: quotes, separators, embedded newlines, NULLs
-- and empty strings (an unquoted empty field is NULL, "" is '')
CREATE TABLE src(id INT, name TEXT, note TEXT);
INSERT INTO src VALUES(1, 'plain', 'a "quoted" word');
INSERT INTO src VALUES(2, 'comma, here', 'two
lines');
INSERT INTO src VALUES(3, NULL, '');
INSERT INTO src VALUES(4, '  spaces  ', 'it''s');
.headers on
.mode csv
.once export.csv
SELECT * FROM src;
.import --csv export.csv dst
.mode quote
SELECT * FROM dst;
.schema dst
SELECT count(*) FROM src JOIN dst ON src.id = dst.id
 AND src.name IS dst.name AND src.note IS dst.note;
CREATE TABLE typed(id INT, name TEXT, note TEXT);
.import --csv --skip 1 export.csv typed
SELECT id, typeof(id), name IS NULL, note FROM typed;
