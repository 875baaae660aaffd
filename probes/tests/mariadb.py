"""The demo warehouse on the machine's MariaDB, for the MySQL warehouse tests (issue 34).

Each test process builds the demo in a database of its own and creates a reader login of its
own (logins are server-wide), both dropped at the end of the module.
"""

import os

import pymysql
import pytest

from probes.mysql_demo import build_mysql_demo, create_mysql_reader
from probes.mysql_runner import mysql_parameters
from tests.support.services import require_mariadb


def _admin(dsn: str):
    parameters = mysql_parameters(dsn) | {"database": None}
    return pymysql.connect(**parameters, autocommit=True)


def _with_database(dsn: str, database: str) -> str:
    return dsn.rsplit("/", 1)[0] + "/" + database


@pytest.fixture(scope="module")
def mariadb_demo():
    """{"admin": root's DSN on the demo database, "reader": docket_reader's DSN, "database": name}."""
    admin = require_mariadb()
    database, login = f"docket_demo_{os.getpid()}", f"docket_reader_{os.getpid()}"
    conn = _admin(admin)
    with conn.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS `{database}`")
        cursor.execute(f"CREATE DATABASE `{database}`")
    admin_dsn = _with_database(admin, database)
    build_mysql_demo(admin_dsn)
    reader = create_mysql_reader(admin_dsn, login=login)
    yield {"admin": admin_dsn, "reader": reader, "database": database, "login": login}
    with conn.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS `{database}`")
        cursor.execute(f"DROP USER IF EXISTS '{login}'@'%'")
    conn.close()


def admin_statement(dsn: str, statement: str, args=None) -> list[tuple]:
    conn = pymysql.connect(**mysql_parameters(dsn), autocommit=True)
    try:
        with conn.cursor() as cursor:
            cursor.execute(statement, args)
            return list(cursor.fetchall())
    finally:
        conn.close()
