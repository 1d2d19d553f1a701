// File: sweep/query.cc
// The queries of sweep.h over a sweep's database: the Pareto frontier and the top rows.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "sweep/store.h"
#include "sweep/sweep.h"

namespace ndt {

using sweep_detail::Db;
using sweep_detail::Meta;
using sweep_detail::OpenDb;
using sweep_detail::Prepare;
using sweep_detail::Stmt;

std::vector<SweepPick> ParetoFrontier(std::vector<SweepPick> points,
                                      const std::vector<bool>& maximize) {
  const size_t d = maximize.size();
  // Everything as "lower is better".
  for (SweepPick& p : points) {
    for (size_t k = 0; k < d; ++k) {
      if (maximize[k]) p.values[k] = -p.values[k];
    }
  }
  std::sort(points.begin(), points.end(), [](const SweepPick& a, const SweepPick& b) {
    if (a.values != b.values) return a.values < b.values;
    return a.id < b.id;
  });
  // After the sort, anything that dominates a point comes before it.
  std::vector<SweepPick> front;
  for (SweepPick& p : points) {
    bool dominated = false;
    for (const SweepPick& f : front) {
      bool le = true, lt = false;
      for (size_t k = 0; k < d && le; ++k) {
        le = f.values[k] <= p.values[k];
        lt |= f.values[k] < p.values[k];
      }
      if (le && lt) {
        dominated = true;
        break;
      }
    }
    if (!dominated) front.push_back(std::move(p));
  }
  for (SweepPick& p : front) {
    for (size_t k = 0; k < d; ++k) {
      if (maximize[k]) p.values[k] = -p.values[k];
    }
  }
  return front;
}

namespace {

StatusOr<std::vector<HeadlineColumn>> PickColumns(sqlite3* db, const std::string& path,
                                                  const std::vector<std::string>& names,
                                                  const std::string& flag) {
  NDT_ASSIGN_OR_RETURN(std::string command, Meta(db, path, "command"));
  return FindHeadlineColumns(command, names, flag);
}

StatusOr<std::vector<SweepPick>> Select(sqlite3* db, const std::string& path,
                                        const std::vector<HeadlineColumn>& cols,
                                        const std::string& tail) {
  std::string sql = "SELECT id, params";
  std::string where = " FROM results WHERE status = 'ok'";
  for (const HeadlineColumn& c : cols) {
    sql += ", " + c.name;
    where += " AND " + c.name + " IS NOT NULL";
  }
  sql += ", warning_list";
  const int list_at = static_cast<int>(2 + cols.size());
  NDT_ASSIGN_OR_RETURN(Stmt s, Prepare(db, path, sql + where + tail));
  std::vector<SweepPick> out;
  while (sqlite3_step(s.get()) == SQLITE_ROW) {
    SweepPick p;
    p.id = sqlite3_column_int64(s.get(), 0);
    p.params = reinterpret_cast<const char*>(sqlite3_column_text(s.get(), 1));
    for (size_t k = 0; k < cols.size(); ++k) {
      p.values.push_back(sqlite3_column_double(s.get(), static_cast<int>(2 + k)));
    }
    if (sqlite3_column_type(s.get(), list_at) == SQLITE_TEXT) {
      const Json list = Json::parse(
          reinterpret_cast<const char*>(sqlite3_column_text(s.get(), list_at)), nullptr, false);
      if (list.is_array()) {
        for (const Json& w : list) {
          if (w.is_string()) p.warnings.push_back(w.get<std::string>());
        }
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

StatusOr<std::vector<SweepPick>> QueryPareto(const std::string& path,
                                             const std::vector<std::string>& columns) {
  if (columns.size() < 2 || columns.size() > 3) {
    return Status::InvalidInput("--pareto takes two or three columns (e.g. step_time_s,cost_usd)");
  }
  NDT_ASSIGN_OR_RETURN(Db db, OpenDb(path, false));
  NDT_ASSIGN_OR_RETURN(std::vector<HeadlineColumn> cols,
                       PickColumns(db.get(), path, columns, "--pareto"));
  NDT_ASSIGN_OR_RETURN(std::vector<SweepPick> all, Select(db.get(), path, cols, ""));
  std::vector<bool> maximize;
  for (const HeadlineColumn& c : cols) maximize.push_back(c.maximize);
  return ParetoFrontier(std::move(all), maximize);
}

StatusOr<std::vector<SweepPick>> QueryTop(const std::string& path, const std::string& column,
                                          int k) {
  if (k < 1) return Status::InvalidInput("--top must be >= 1");
  NDT_ASSIGN_OR_RETURN(Db db, OpenDb(path, false));
  NDT_ASSIGN_OR_RETURN(std::vector<HeadlineColumn> cols,
                       PickColumns(db.get(), path, {column}, "--by"));
  return Select(db.get(), path, cols,
                " ORDER BY " + column + (cols[0].maximize ? " DESC" : " ASC") + ", id LIMIT " +
                    std::to_string(k));
}

}  // namespace ndt
