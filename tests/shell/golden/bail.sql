-- args: -bail
-- -bail stops at the first error and exits with status 1
SELECT 1;
SELECT * FROM nosuch;
SELECT 2;
