#pragma once
// Reading back the SQLite files the exporters write, for the profiler tests: the rows of a query
// as text ("NULL" for NULL), failing the test with SQLite's message for a query it rejects.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

namespace fusebox::profiler::ptest {

struct Sql {
  sqlite3* db = nullptr;
  explicit Sql(const std::string& path) { EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK); }
  ~Sql() { sqlite3_close(db); }
  Sql(const Sql&) = delete;
  Sql& operator=(const Sql&) = delete;
  std::vector<std::vector<std::string>> rows(const std::string& q) {
    std::vector<std::vector<std::string>> out;
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, q.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << q << ": " << sqlite3_errmsg(db);
      return out;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        const unsigned char* t = sqlite3_column_text(st, c);
        row.push_back(t ? reinterpret_cast<const char*>(t) : "NULL");
      }
      out.push_back(row);
    }
    sqlite3_finalize(st);
    return out;
  }
  // The first column of the first row, "" when there is none.
  std::string one(const std::string& q) {
    auto r = rows(q);
    return r.empty() || r[0].empty() ? "" : r[0][0];
  }
};

}  // namespace fusebox::profiler::ptest
