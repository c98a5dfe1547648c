/*
 * test_storage_catalog.c - tables, views and indexes: names, schemas,
 * listing order, drops, errors, persistence across a reopen.
 */
#include <stdlib.h>
#include <strings.h>

#include "test_storage_util.h"

static void test_catalog(void)
{
	const char *path = tu_path("cat", 1);
	stg_pool *p = tu_open(path);
	stg_column_def c[3] = {{.name = "id",
				.type = STG_T_BIGINT,
				.flags = STG_COL_PRIMARY_KEY | STG_COL_NOTNULL},
			       {.name = "name",
				.type = STG_T_TEXT,
				.length = 25,
				.decl_type = "VARCHAR(25)",
				.default_sql = "'nobody'",
				.flags = STG_COL_HAS_DEFAULT},
			       {.name = "price",
				.type = STG_T_DECIMAL,
				.precision = 15,
				.scale = 2}};
	stg_column_def dup[2] = {{.name = "a", .type = STG_T_INT},
				 {.name = "A", .type = STG_T_INT}};
	uint32_t t1, t2, x;
	stg_object *o;
	stg_schema *s;
	int n;

	if (!p)
		return;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(
	    stg_table_create(p, "Items", c, 3, "CREATE TABLE Items(...)", &t1),
	    GPMDB_OK);
	CHECK_RC(stg_table_create(p, "items", c, 1, "", &x), GPMDB_ERROR);
	CHECK(strstr(stg_errmsg(p), "table items already exists") != NULL);
	CHECK_RC(stg_table_create(p, "d", dup, 2, "", &x), GPMDB_ERROR);
	CHECK(strstr(stg_errmsg(p), "duplicate column name") != NULL);
	CHECK_RC(stg_object_create(p, STG_OBJ_VIEW, "v", "v",
				   "CREATE VIEW v AS SELECT 1"),
		 GPMDB_OK);
	CHECK_RC(stg_table_create(p, "V", c, 1, "", &x), GPMDB_ERROR);
	CHECK(strstr(stg_errmsg(p), "already exists") != NULL);
	CHECK_RC(stg_object_create(p, STG_OBJ_INDEX, "ix", "items",
				   "CREATE INDEX ix ON items(name)"),
		 GPMDB_OK);
	CHECK_RC(stg_object_create(p, STG_OBJ_INDEX, "IX", "items", ""),
		 GPMDB_ERROR);
	CHECK(strstr(stg_errmsg(p), "index IX already exists") != NULL);
	CHECK_RC(stg_object_create(p, STG_OBJ_INDEX, "iy", "nosuch", ""),
		 GPMDB_ERROR);
	CHECK_RC(stg_table_create(p, "t2", c + 2, 1, "CREATE TABLE t2", &t2),
		 GPMDB_OK);
	CHECK(t2 != t1);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	stg_close(p);

	p = tu_open_ex(path, false, false, 0, 0);
	if (!p)
		return;
	CHECK_RC(stg_table_find(p, "ITEMS", &x), GPMDB_OK);
	CHECK(x == t1);
	CHECK_RC(stg_objects_list(p, &o, &n), GPMDB_OK);
	CHECK(n == 4);
	if (n == 4) {
		CHECK(o[0].kind == STG_OBJ_TABLE &&
		      !strcmp(o[0].name, "Items"));
		CHECK(o[0].table_id == t1);
		CHECK(!strcmp(o[0].sql, "CREATE TABLE Items(...)"));
		CHECK(o[1].kind == STG_OBJ_VIEW && !strcmp(o[1].name, "v"));
		CHECK(o[2].kind == STG_OBJ_INDEX &&
		      !strcmp(o[2].tbl_name, "items"));
		CHECK(o[3].kind == STG_OBJ_TABLE && o[3].table_id == t2);
	}
	stg_objects_free(o, n);
	CHECK_RC(stg_table_schema(p, t1, &s), GPMDB_OK);
	if (s) {
		CHECK(!strcmp(s->name, "Items") && s->ncols == 3);
		CHECK(s->cols[0].flags ==
		      (STG_COL_PRIMARY_KEY | STG_COL_NOTNULL));
		CHECK(!strcmp(s->cols[1].decl_type, "VARCHAR(25)"));
		CHECK(s->cols[1].length == 25);
		CHECK(s->cols[1].default_sql &&
		      !strcmp(s->cols[1].default_sql, "'nobody'"));
		CHECK(s->cols[0].default_sql == NULL);
		CHECK(!strcmp(s->cols[2].decl_type, "DECIMAL"));
		CHECK(s->cols[2].precision == 15 && s->cols[2].scale == 2);
		stg_schema_free(s);
	}
	CHECK_RC(stg_table_schema(p, 999, &s), GPMDB_NOTFOUND);

	/* Drops. */
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_object_drop(p, STG_OBJ_VIEW, "nosuch"), GPMDB_NOTFOUND);
	CHECK(strstr(stg_errmsg(p), "no such view: nosuch") != NULL);
	CHECK_RC(stg_object_drop(p, STG_OBJ_VIEW, "V"), GPMDB_OK);
	CHECK_RC(stg_object_drop(p, STG_OBJ_TABLE, "t2"), GPMDB_OK);
	CHECK_RC(stg_table_drop(p, t2), GPMDB_NOTFOUND);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	CHECK_RC(stg_objects_list(p, &o, &n), GPMDB_OK);
	CHECK(n == 2);
	stg_objects_free(o, n);
	/* The name is free again; ids are not reused. */
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_table_create(p, "T2", c, 1, "", &x), GPMDB_OK);
	CHECK(x > t2);
	CHECK_RC(stg_table_drop(p, t1), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	CHECK_RC(stg_objects_list(p, &o, &n), GPMDB_OK);
	CHECK(n == 1 && !strcmp(o[0].name, "T2")); /* ix went with items */
	stg_objects_free(o, n);
	TU_CHECK_OK(p);
	stg_close(p);
	unlink(path);
}

static void test_many_tables(void)
{
	const char *path = tu_path("many", 0);
	stg_pool *p = tu_open(path);
	stg_column_def c = {.name = "a", .type = STG_T_INT};
	char name[32];
	uint32_t tid;
	int i;

	if (!p)
		return;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		CHECK_RC(stg_table_create(p, name, &c, 1, "", &tid), GPMDB_OK);
	}
	CHECK_RC(stg_commit(p), GPMDB_OK);
	CHECK_RC(stg_begin(p), GPMDB_OK);
	for (i = 0; i < 100; i += 2) {
		snprintf(name, sizeof(name), "T%d", i);
		CHECK_RC(stg_object_drop(p, STG_OBJ_TABLE, name), GPMDB_OK);
	}
	CHECK_RC(stg_commit(p), GPMDB_OK);
	CHECK_RC(stg_table_find(p, "t99", &tid), GPMDB_OK);
	CHECK(tid == 100);
	CHECK_RC(stg_table_find(p, "t98", &tid), GPMDB_NOTFOUND);
	TU_CHECK_OK(p);
	stg_close(p);
	unlink(path);
}

int main(void)
{
	TEST_RUN(test_catalog);
	TEST_RUN(test_many_tables);
	tu_cleanup();
	TEST_MAIN_END();
}
