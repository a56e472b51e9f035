#include "trainer/data/schema.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/yaml_json.h"
#include "trainer/embedding/id_hash.h"

namespace disttrain::trainer {
namespace {

using embedding::TableConfig;
using nlohmann::json;

// A JSON object being read: typed getters that name the field in their errors, and a check that
// every key was one the reader knows (a misspelt key is an error, not a silent default).
class SchemaNode {
 public:
  SchemaNode(const json& j, std::string path) : j_(j), path_(std::move(path)) {}

  absl::Status IsObject() const {
    return j_.is_object() ? absl::OkStatus()
                          : absl::InvalidArgumentError(absl::StrCat(path_, " must be a mapping"));
  }
  bool Has(const char* key) {
    read_.insert(key);
    return j_.is_object() && j_.contains(key) && !j_[key].is_null();
  }
  const json& At(const char* key) { return j_[key]; }
  std::string Path(const char* key) const { return absl::StrCat(path_, ".", key); }

  absl::Status String(const char* key, std::string* out) {
    if (!Has(key)) return absl::OkStatus();
    const json& v = j_[key];
    if (v.is_string()) {
      *out = v.get<std::string>();
    } else if (v.is_number() || v.is_boolean()) {
      *out = v.dump();
    } else {
      return absl::InvalidArgumentError(absl::StrCat(Path(key), " must be a string"));
    }
    return absl::OkStatus();
  }
  template <typename T>
  absl::Status Number(const char* key, T* out, double min, double max) {
    if (!Has(key)) return absl::OkStatus();
    const json& v = j_[key];
    if (!v.is_number())
      return absl::InvalidArgumentError(absl::StrCat(Path(key), " must be a number"));
    const double d = v.get<double>();
    if (!(d >= min && d <= max))
      return absl::InvalidArgumentError(
          absl::StrCat(Path(key), " is ", v.dump(), "; it must be between ", min, " and ", max));
    *out = static_cast<T>(d);
    return absl::OkStatus();
  }
  // A list of strings, or one string.
  absl::Status Strings(const char* key, std::vector<std::string>* out) {
    if (!Has(key)) return absl::OkStatus();
    const json& v = j_[key];
    out->clear();
    if (v.is_string()) {
      out->push_back(v.get<std::string>());
      return absl::OkStatus();
    }
    if (!v.is_array())
      return absl::InvalidArgumentError(absl::StrCat(Path(key), " must be a list of strings"));
    for (const json& e : v) {
      if (!e.is_string())
        return absl::InvalidArgumentError(absl::StrCat(Path(key), " must be a list of strings"));
      out->push_back(e.get<std::string>());
    }
    return absl::OkStatus();
  }
  absl::Status NoOtherKeys() const {
    if (!j_.is_object()) return absl::OkStatus();
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      if (!read_.count(it.key()))
        return absl::InvalidArgumentError(absl::StrCat(path_, ": unknown key \"", it.key(), "\""));
    }
    return absl::OkStatus();
  }

 private:
  const json& j_;
  std::string path_;
  std::set<std::string> read_;
};

#define SCHEMA_RETURN_IF_ERROR(expr) \
  do {                               \
    absl::Status _s = (expr);        \
    if (!_s.ok()) return _s;         \
  } while (0)

// The table keys shared by `tables[]`, `table_defaults` and `wide`.
absl::Status ReadTableFields(SchemaNode& n, TableConfig* t) {
  std::string optimizer, eviction;
  SCHEMA_RETURN_IF_ERROR(n.Number("dim", &t->dim, 1, 4096));
  SCHEMA_RETURN_IF_ERROR(n.String("optimizer", &optimizer));
  SCHEMA_RETURN_IF_ERROR(n.Number("learning_rate", &t->learning_rate, 1e-9, 1e3));
  SCHEMA_RETURN_IF_ERROR(n.Number("initial_accumulator", &t->initial_accumulator, 0, 1e6));
  SCHEMA_RETURN_IF_ERROR(n.Number("l1", &t->l1, 0, 1e6));
  SCHEMA_RETURN_IF_ERROR(n.Number("l2", &t->l2, 0, 1e6));
  SCHEMA_RETURN_IF_ERROR(n.Number("beta", &t->beta, 0, 1e6));
  SCHEMA_RETURN_IF_ERROR(n.Number("init_stddev", &t->init_stddev, 0, 10));
  SCHEMA_RETURN_IF_ERROR(n.Number("seed", &t->seed, 0, 9.0e15));
  SCHEMA_RETURN_IF_ERROR(n.Number("capacity", &t->capacity, 0, 1e12));
  SCHEMA_RETURN_IF_ERROR(n.String("eviction", &eviction));
  SCHEMA_RETURN_IF_ERROR(n.Number("min_count", &t->min_count, 0, 65535));
  if (!optimizer.empty()) {
    absl::StatusOr<embedding::RowOptimizerKind> k = embedding::ParseRowOptimizer(optimizer);
    if (!k.ok())
      return absl::InvalidArgumentError(
          absl::StrCat(n.Path("optimizer"), ": ", k.status().message()));
    t->optimizer = *k;
  }
  if (!eviction.empty()) {
    absl::StatusOr<embedding::Eviction> e = embedding::ParseEviction(eviction);
    if (!e.ok())
      return absl::InvalidArgumentError(
          absl::StrCat(n.Path("eviction"), ": ", e.status().message()));
    t->eviction = *e;
  }
  return absl::OkStatus();
}

std::string Resolve(const std::string& file, const std::string& dir) {
  if (file.empty() || file[0] == '/' || dir.empty()) return file;
  return (std::filesystem::path(dir) / file).string();
}

absl::Status ReadColumn(SchemaNode& n, ColumnSpec* c) {
  SCHEMA_RETURN_IF_ERROR(n.IsObject());
  std::string type = "categorical", pooling, transform;
  SCHEMA_RETURN_IF_ERROR(n.String("name", &c->name));
  if (c->name.empty())
    return absl::InvalidArgumentError(absl::StrCat(n.Path("name"), " is required"));
  SCHEMA_RETURN_IF_ERROR(n.String("type", &type));
  SCHEMA_RETURN_IF_ERROR(n.String("table", &c->table));
  SCHEMA_RETURN_IF_ERROR(n.String("separator", &c->separator));
  SCHEMA_RETURN_IF_ERROR(n.String("pooling", &pooling));
  SCHEMA_RETURN_IF_ERROR(n.String("transform", &transform));
  SCHEMA_RETURN_IF_ERROR(n.Number("default", &c->default_value, -3.0e38, 3.0e38));
  if (n.Has("buckets")) {
    const json& b = n.At("buckets");
    if (!b.is_array() || b.empty())
      return absl::InvalidArgumentError(
          absl::StrCat(n.Path("buckets"), " must be a list of numbers"));
    for (const json& v : b) {
      if (!v.is_number())
        return absl::InvalidArgumentError(
            absl::StrCat(n.Path("buckets"), " must be a list of numbers"));
      c->buckets.push_back(v.get<float>());
    }
    if (!std::is_sorted(c->buckets.begin(), c->buckets.end()) ||
        std::adjacent_find(c->buckets.begin(), c->buckets.end()) != c->buckets.end())
      return absl::InvalidArgumentError(
          absl::StrCat(n.Path("buckets"), " must be strictly increasing"));
  }
  if (type == "categorical") {
    c->kind = ColumnKind::kCategorical;
  } else if (type == "multi_categorical") {
    c->kind = ColumnKind::kMultiCategorical;
  } else if (type == "numeric") {
    c->kind = ColumnKind::kNumeric;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        n.Path("type"), ": \"", type, "\" is not categorical, multi_categorical or numeric"));
  }
  if (!c->buckets.empty() && c->kind != ColumnKind::kNumeric)
    return absl::InvalidArgumentError(
        absl::StrCat(n.Path("buckets"), ": only numeric columns have buckets"));
  if (pooling == "sum") {
    c->pooling = Pooling::kSum;
  } else if (!pooling.empty() && pooling != "mean") {
    return absl::InvalidArgumentError(
        absl::StrCat(n.Path("pooling"), ": \"", pooling, "\" is not mean or sum"));
  }
  if (transform == "log1p") {
    c->log1p = true;
  } else if (!transform.empty() && transform != "none") {
    return absl::InvalidArgumentError(
        absl::StrCat(n.Path("transform"), ": \"", transform, "\" is not log1p or none"));
  }
  if (c->separator.empty())
    return absl::InvalidArgumentError(absl::StrCat(n.Path("separator"), " must not be empty"));
  if (c->is_field() && c->table.empty()) c->table = c->name;
  if (!c->is_field() && !c->table.empty())
    return absl::InvalidArgumentError(absl::StrCat(
        n.Path("table"), ": a numeric column without buckets is a dense input and has no table"));
  return n.NoOtherKeys();
}

}  // namespace

std::string WideTableName(absl::string_view table) { return absl::StrCat(table, "/wide"); }

std::vector<const ColumnSpec*> Schema::fields() const {
  std::vector<const ColumnSpec*> out;
  for (const ColumnSpec& c : columns)
    if (c.is_field()) out.push_back(&c);
  return out;
}

std::vector<const ColumnSpec*> Schema::dense_inputs() const {
  std::vector<const ColumnSpec*> out;
  for (const ColumnSpec& c : columns)
    if (!c.is_field()) out.push_back(&c);
  return out;
}

const TableConfig* Schema::table(absl::string_view name) const {
  for (const TableConfig& t : tables)
    if (t.name == name) return &t;
  return nullptr;
}

absl::StatusOr<Schema> ParseSchema(absl::string_view text, const std::string& data_dir) {
  absl::StatusOr<std::vector<json>> docs = ParseYamlDocuments(text);
  if (!docs.ok())
    return absl::InvalidArgumentError(absl::StrCat("schema: ", docs.status().message()));
  if (docs->size() != 1) return absl::InvalidArgumentError("schema: want exactly one document");
  SchemaNode root((*docs)[0], "schema");
  SCHEMA_RETURN_IF_ERROR(root.IsObject());
  Schema s;
  std::string format, delimiter;
  SCHEMA_RETURN_IF_ERROR(root.String("format", &format));
  SCHEMA_RETURN_IF_ERROR(root.String("delimiter", &delimiter));
  SCHEMA_RETURN_IF_ERROR(root.Strings("files", &s.files));
  SCHEMA_RETURN_IF_ERROR(root.Strings("test_files", &s.test_files));
  SCHEMA_RETURN_IF_ERROR(root.Number("test_fraction", &s.test_fraction, 0, 0.99));
  SCHEMA_RETURN_IF_ERROR(root.Number("split_seed", &s.split_seed, 0, 9.0e15));
  SCHEMA_RETURN_IF_ERROR(root.Number("rows", &s.synthetic_rows, 0, 1e13));
  if (format.empty()) {
    const std::string first = s.files.empty() ? "" : s.files[0];
    const std::string ext = std::filesystem::path(first).extension().string();
    format = ext == ".tfrecord" || ext == ".tfrecords" ? "tfrecord" : ext == ".csv" ? "csv" : "tsv";
  }
  if (format != "csv" && format != "tsv" && format != "tfrecord" && format != "synthetic-criteo")
    return absl::InvalidArgumentError(absl::StrCat(
        "schema.format: \"", format, "\" is not csv, tsv, tfrecord or synthetic-criteo"));
  s.format = format;
  if (format == "synthetic-criteo") {
    TableConfig defaults;
    if (root.Has("table_defaults")) {
      SchemaNode d(root.At("table_defaults"), "schema.table_defaults");
      SCHEMA_RETURN_IF_ERROR(d.IsObject());
      SCHEMA_RETURN_IF_ERROR(ReadTableFields(d, &defaults));
      SCHEMA_RETURN_IF_ERROR(d.NoOtherKeys());
    }
    Schema synthetic =
        SyntheticCriteoSchema(defaults.dim, s.synthetic_rows > 0 ? s.synthetic_rows : 1000000);
    for (TableConfig& t : synthetic.tables) {
      const std::string name = t.name;
      const uint64_t seed = t.seed;
      t = defaults;
      t.name = name;
      t.seed = seed;
    }
    synthetic.test_fraction = s.test_fraction > 0 ? s.test_fraction : 0.1;
    synthetic.split_seed = s.split_seed;
    SCHEMA_RETURN_IF_ERROR(root.NoOtherKeys());
    return synthetic;
  }
  s.delimiter = format == "csv" ? ',' : '\t';
  if (!delimiter.empty()) {
    if (delimiter.size() != 1)
      return absl::InvalidArgumentError("schema.delimiter must be one character");
    s.delimiter = delimiter[0];
  }
  if (s.files.empty()) return absl::InvalidArgumentError("schema.files: name at least one file");
  for (std::string& f : s.files) f = Resolve(f, data_dir);
  for (std::string& f : s.test_files) f = Resolve(f, data_dir);
  if (!s.test_files.empty() && s.test_fraction > 0)
    return absl::InvalidArgumentError("schema: give test_files or test_fraction, not both");
  if (root.Has("joins")) {
    const json& joins = root.At("joins");
    if (!joins.is_array()) return absl::InvalidArgumentError("schema.joins must be a list");
    for (size_t i = 0; i < joins.size(); ++i) {
      SchemaNode j(joins[i], absl::StrCat("schema.joins[", i, "]"));
      SCHEMA_RETURN_IF_ERROR(j.IsObject());
      JoinSpec join;
      SCHEMA_RETURN_IF_ERROR(j.Strings("files", &join.files));
      SCHEMA_RETURN_IF_ERROR(j.String("key", &join.key));
      SCHEMA_RETURN_IF_ERROR(j.NoOtherKeys());
      if (join.files.empty() || join.key.empty())
        return absl::InvalidArgumentError(
            absl::StrCat("schema.joins[", i, "] needs files and key"));
      if (format == "tfrecord")
        return absl::InvalidArgumentError("schema.joins: only csv and tsv files can be joined");
      for (std::string& f : join.files) f = Resolve(f, data_dir);
      s.joins.push_back(std::move(join));
    }
  }
  if (root.Has("label")) {
    const json& l = root.At("label");
    if (l.is_string()) {
      s.label = l.get<std::string>();
    } else {
      SchemaNode ln(l, "schema.label");
      SCHEMA_RETURN_IF_ERROR(ln.IsObject());
      SCHEMA_RETURN_IF_ERROR(ln.String("column", &s.label));
      if (ln.Has("threshold")) {
        float t = 0;
        SCHEMA_RETURN_IF_ERROR(ln.Number("threshold", &t, -3.0e38, 3.0e38));
        s.label_threshold = t;
      }
      SCHEMA_RETURN_IF_ERROR(ln.NoOtherKeys());
    }
  }
  if (s.label.empty()) return absl::InvalidArgumentError("schema.label: name the label column");
  TableConfig defaults;
  if (root.Has("table_defaults")) {
    SchemaNode d(root.At("table_defaults"), "schema.table_defaults");
    SCHEMA_RETURN_IF_ERROR(d.IsObject());
    SCHEMA_RETURN_IF_ERROR(ReadTableFields(d, &defaults));
    SCHEMA_RETURN_IF_ERROR(d.NoOtherKeys());
  }
  s.wide = TableConfig{};
  s.wide.dim = 1;
  s.wide.optimizer = embedding::RowOptimizerKind::kFtrl;
  s.wide.init_stddev = 0;
  if (root.Has("wide")) {
    SchemaNode w(root.At("wide"), "schema.wide");
    SCHEMA_RETURN_IF_ERROR(w.IsObject());
    SCHEMA_RETURN_IF_ERROR(ReadTableFields(w, &s.wide));
    SCHEMA_RETURN_IF_ERROR(w.NoOtherKeys());
    s.wide.dim = 1;
  }
  if (!root.Has("columns") || !root.At("columns").is_array() || root.At("columns").empty())
    return absl::InvalidArgumentError("schema.columns: list the feature columns");
  const json& columns = root.At("columns");
  std::set<std::string> names;
  for (size_t i = 0; i < columns.size(); ++i) {
    SchemaNode cn(columns[i], absl::StrCat("schema.columns[", i, "]"));
    ColumnSpec c;
    SCHEMA_RETURN_IF_ERROR(ReadColumn(cn, &c));
    if (!names.insert(c.name).second)
      return absl::InvalidArgumentError(absl::StrCat("schema.columns: \"", c.name, "\" twice"));
    if (c.name == s.label)
      return absl::InvalidArgumentError(
          absl::StrCat("schema.columns: \"", c.name, "\" is the label"));
    s.columns.push_back(std::move(c));
  }
  if (root.Has("tables")) {
    const json& tables = root.At("tables");
    if (!tables.is_array()) return absl::InvalidArgumentError("schema.tables must be a list");
    for (size_t i = 0; i < tables.size(); ++i) {
      SchemaNode tn(tables[i], absl::StrCat("schema.tables[", i, "]"));
      SCHEMA_RETURN_IF_ERROR(tn.IsObject());
      TableConfig t = defaults;
      t.seed = 0;
      SCHEMA_RETURN_IF_ERROR(tn.String("name", &t.name));
      SCHEMA_RETURN_IF_ERROR(ReadTableFields(tn, &t));
      SCHEMA_RETURN_IF_ERROR(tn.NoOtherKeys());
      if (t.name.empty())
        return absl::InvalidArgumentError(absl::StrCat(tn.Path("name"), " is required"));
      if (t.name.find('/') != std::string::npos)
        return absl::InvalidArgumentError(
            absl::StrCat(tn.Path("name"), ": \"", t.name, "\" has a '/'"));
      if (s.table(t.name) != nullptr)
        return absl::InvalidArgumentError(absl::StrCat("schema.tables: \"", t.name, "\" twice"));
      s.tables.push_back(std::move(t));
    }
  }
  // A column's table that is not listed gets the defaults; a listed table no column uses is a
  // mistake worth stopping for.
  std::set<std::string> used;
  for (const ColumnSpec& c : s.columns) {
    if (!c.is_field()) continue;
    used.insert(c.table);
    if (s.table(c.table) == nullptr) {
      TableConfig t = defaults;
      t.name = c.table;
      s.tables.push_back(std::move(t));
    }
  }
  for (TableConfig& t : s.tables) {
    if (!used.count(t.name))
      return absl::InvalidArgumentError(
          absl::StrCat("schema.tables: no column uses \"", t.name, "\""));
    if (t.seed == 0) t.seed = embedding::IdOfString(t.name);
    if (absl::Status st = embedding::ValidateTableConfig(t); !st.ok())
      return absl::InvalidArgumentError(absl::StrCat("schema: ", st.message()));
  }
  s.wide.name = "wide";
  if (absl::Status st = embedding::ValidateTableConfig(s.wide); !st.ok())
    return absl::InvalidArgumentError(absl::StrCat("schema: ", st.message()));
  SCHEMA_RETURN_IF_ERROR(root.NoOtherKeys());
  return s;
}

absl::StatusOr<Schema> LoadSchema(const std::string& path, const std::string& data_dir) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open the schema file ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string dir =
      data_dir.empty() ? std::filesystem::path(path).parent_path().string() : data_dir;
  absl::StatusOr<Schema> s = ParseSchema(ss.str(), dir);
  if (!s.ok())
    return absl::Status(s.status().code(), absl::StrCat(path, ": ", s.status().message()));
  return s;
}

Schema SyntheticCriteoSchema(int dim, uint64_t rows) {
  Schema s;
  s.format = "synthetic-criteo";
  s.synthetic_rows = rows;
  s.test_fraction = 0.1;
  s.label = "label";
  for (int i = 1; i <= 13; ++i) {
    ColumnSpec c;
    c.name = absl::StrCat("I", i);
    c.kind = ColumnKind::kNumeric;
    c.log1p = true;
    s.columns.push_back(std::move(c));
  }
  for (int i = 1; i <= 26; ++i) {
    ColumnSpec c;
    c.name = absl::StrCat("C", i);
    c.table = c.name;
    s.columns.push_back(c);
    TableConfig t;
    t.name = c.name;
    t.dim = dim;
    t.seed = embedding::IdOfString(c.name);
    s.tables.push_back(std::move(t));
  }
  s.wide.name = "wide";
  s.wide.dim = 1;
  s.wide.optimizer = embedding::RowOptimizerKind::kFtrl;
  s.wide.init_stddev = 0;
  return s;
}

}  // namespace disttrain::trainer
