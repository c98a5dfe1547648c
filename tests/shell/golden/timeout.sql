PRAGMA busy_timeout;
.timeout 250
PRAGMA busy_timeout;
.timeout soon
PRAGMA busy_timeout = 75;
PRAGMA busy_timeout;
