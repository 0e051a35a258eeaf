// gm_dump: print graphmend's AST dump (CPython's ast.dump(...,
// include_attributes=True)) for Python files; the differential harness's
// door into the C++ core.
//
//   gm_dump [--minor N] [--no-attributes] FILE...
//       Prints each file's dump on one line, or on a syntax error
//       `ERROR file:line:col: Kind: message` (col 1-based, like CPython's
//       traceback). Exit 0 if every file parsed, 1 if any was rejected,
//       2 on usage or I/O errors.
//
//   gm_dump [--minor N] --batch LISTFILE [--out FILE]
//       LISTFILE holds one path per line ('-' reads the list from stdin).
//       Writes one framed record per path, flushed after each, so that a
//       reader can tell exactly which file a crash happened on:
//           #GM <STATUS> <path-bytes> <text-bytes>\n<path>\n<text>\n
//       STATUS is OK (text = the dump), ERR (text = "Kind\tline\tcol\tmessage",
//       col 0-based as in SyntaxError data) or IOERR (text = reason).
//       The run ends with `#GM END <count> 0\n\n\n`.
//
//   gm_dump [--minor N] --replay FILE
//       Dumper self-check, independent of the parser: FILE holds trees
//       serialised by tests/differential/serialize_tree.py, one per record
//       `@ <name>\n<tokens>\n`; each is rebuilt with Tree::add and dumped,
//       written as framed records as in --batch.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ast/dump.h"
#include "ast/tree.h"
#include "parser/parse.h"
#include "syntax/source.h"

namespace {

using gm::ast::Field;
using gm::ast::FieldKind;
using gm::ast::NodeId;
using gm::ast::NodeKind;
using gm::ast::Tree;

struct Options {
  int minor = 11;
  bool attributes = true;
  std::string batch;
  std::string replay;
  std::string out;
  std::vector<std::string> files;
};

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr,
               "gm_dump: %s\n"
               "usage: gm_dump [--minor N] [--no-attributes] FILE...\n"
               "       gm_dump [--minor N] --batch LISTFILE [--out FILE]\n"
               "       gm_dump [--minor N] --replay FILE [--out FILE]\n",
               msg);
  std::exit(2);
}

bool read_file(const std::string& path, std::string& data, std::string& why) {
  std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) {
    why = std::strerror(errno);
    return false;
  }
  data.clear();
  char buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data.append(buf, n);
  const bool bad = std::ferror(f);
  if (f != stdin) std::fclose(f);
  if (bad) {
    why = "read error";
    return false;
  }
  return true;
}

struct Outcome {
  bool ok = false;
  std::string text;  // the dump
  gm::SyntaxError error;
};

Outcome dump_source(std::string bytes, const Options& opt) {
  Outcome r;
  auto decoded = gm::Source::decode(std::move(bytes));
  if (auto* err = std::get_if<gm::SyntaxError>(&decoded)) {
    r.error = *err;
    return r;
  }
  const auto& source = std::get<gm::Source>(decoded);
  gm::ParseOptions po;
  po.version = {3, opt.minor};
  auto result = gm::parse_module(source, po);
  if (result.error) {
    r.error = *result.error;
    return r;
  }
  gm::ast::DumpOptions dopt;
  dopt.minor = opt.minor;
  dopt.include_attributes = opt.attributes;
  r.text = gm::ast::dump(result.tree, result.tree.root(), dopt);
  r.ok = true;
  return r;
}

void write_record(std::FILE* out, std::string_view status, std::string_view path,
                  std::string_view text) {
  std::fprintf(out, "#GM %.*s %zu %zu\n", static_cast<int>(status.size()), status.data(),
               path.size(), text.size());
  std::fwrite(path.data(), 1, path.size(), out);
  std::fputc('\n', out);
  std::fwrite(text.data(), 1, text.size(), out);
  std::fputc('\n', out);
  std::fflush(out);
}

std::string error_text(const gm::SyntaxError& e) {
  std::string s = e.kind.empty() ? "SyntaxError" : e.kind;
  s += '\t';
  s += std::to_string(e.line);
  s += '\t';
  s += std::to_string(e.col);
  s += '\t';
  s += e.message;
  return s;
}

std::FILE* open_out(const Options& opt) {
  if (opt.out.empty() || opt.out == "-") return stdout;
  std::FILE* f = std::fopen(opt.out.c_str(), "wb");
  if (!f) {
    std::fprintf(stderr, "gm_dump: cannot write %s: %s\n", opt.out.c_str(), std::strerror(errno));
    std::exit(2);
  }
  return f;
}

int run_batch(const Options& opt) {
  std::string list, why;
  if (!read_file(opt.batch, list, why)) {
    std::fprintf(stderr, "gm_dump: cannot read %s: %s\n", opt.batch.c_str(), why.c_str());
    return 2;
  }
  std::FILE* out = open_out(opt);
  std::size_t count = 0;
  std::string data;
  std::size_t pos = 0;
  while (pos < list.size()) {
    std::size_t eol = list.find('\n', pos);
    if (eol == std::string::npos) eol = list.size();
    std::string path = list.substr(pos, eol - pos);
    pos = eol + 1;
    if (!path.empty() && path.back() == '\r') path.pop_back();
    if (path.empty()) continue;
    ++count;
    if (!read_file(path, data, why)) {
      write_record(out, "IOERR", path, why);
      continue;
    }
    const Outcome r = dump_source(std::move(data), opt);
    if (r.ok)
      write_record(out, "OK", path, r.text);
    else
      write_record(out, "ERR", path, error_text(r.error));
  }
  write_record(out, "END", std::to_string(count), "");
  if (out != stdout) std::fclose(out);
  return 0;
}

// ---------------------------------------------------------------- replay

class TreeReader {
 public:
  TreeReader(std::string_view text, Tree& tree) : text_(text), tree_(tree) {}

  NodeId read_root() {
    const Field f = read_value(FieldKind::Node);
    skip_ws();
    if (pos_ != text_.size()) fail("trailing tokens");
    return NodeId{f.a};
  }

 private:
  [[noreturn]] void fail(const std::string& why) {
    throw std::runtime_error(why + " at offset " + std::to_string(pos_));
  }
  void skip_ws() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n')) ++pos_;
  }
  std::string_view token() {
    skip_ws();
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ' ' && text_[pos_] != '\n') ++pos_;
    if (start == pos_) fail("unexpected end");
    return text_.substr(start, pos_ - start);
  }
  std::string_view peek() {
    const std::size_t save = pos_;
    const auto t = token();
    pos_ = save;
    return t;
  }
  static std::string unhex(std::string_view h) {
    if (h == "-") return {};
    std::string s;
    for (std::size_t i = 0; i + 1 < h.size(); i += 2)
      s += static_cast<char>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16));
    return s;
  }
  static NodeKind kind_named(std::string_view name) {
    for (int k = 0; k < gm::ast::kNodeKindCount; ++k)
      if (gm::ast::node_info(static_cast<NodeKind>(k)).name == name)
        return static_cast<NodeKind>(k);
    throw std::runtime_error("unknown node kind " + std::string(name));
  }
  std::int32_t number() { return static_cast<std::int32_t>(std::stol(std::string(token()))); }

  Field read_value(FieldKind kind) {
    const std::string_view t = token();
    if (t == "~")
      return kind == FieldKind::Node || kind == FieldKind::OptNode ? Tree::none()
                                                                   : Tree::none_string();
    switch (t[0]) {
      case '(': return Tree::node(read_node(kind_named(t.substr(1))));
      case '[': {
        std::vector<NodeId> items;
        std::vector<NodeKind> ops;
        std::vector<gm::ast::StrRef> idents;
        while (peek() != "]") {
          if (kind == FieldKind::OpList) {
            ops.push_back(kind_named(token().substr(1)));
          } else if (kind == FieldKind::IdentList) {
            const auto tok = token();
            idents.push_back(tree_.intern(unhex(tok.substr(1))));
          } else {
            items.push_back(NodeId{read_value(FieldKind::OptNode).a});
          }
        }
        token();
        if (kind == FieldKind::OpList) return tree_.op_list(ops);
        if (kind == FieldKind::IdentList) return tree_.ident_list(idents);
        return tree_.list(items);
      }
      case 'I': return tree_.string(unhex(t.substr(1)));
      case 'i':
        return Tree::integer(static_cast<std::int32_t>(std::stol(std::string(t.substr(1)))));
      case 'o': return Tree::op(kind_named(t.substr(1)));
      case 'c': {
        gm::ast::ConstantValue v;
        using K = gm::ast::ConstantValue::Kind;
        const auto payload = t.substr(2);
        switch (t[1]) {
          case 'N': v.kind = K::None; break;
          case 'T': v.kind = K::True; break;
          case 'F': v.kind = K::False; break;
          case 'E': v.kind = K::Ellipsis; break;
          case 'i':
            v.kind = K::Int;
            v.text = tree_.intern(payload);
            break;
          case 'f':
            v.kind = K::Float;
            v.number = std::strtod(std::string(payload).c_str(), nullptr);
            break;
          case 'j':
            v.kind = K::Complex;
            v.number = std::strtod(std::string(payload).c_str(), nullptr);
            break;
          case 's':
            v.kind = K::Str;
            v.text = tree_.intern(unhex(payload));
            break;
          case 'b':
            v.kind = K::Bytes;
            v.text = tree_.intern(unhex(payload));
            break;
          default: fail("bad constant");
        }
        return tree_.constant(v);
      }
      default: fail("bad token " + std::string(t));
    }
  }

  NodeId read_node(NodeKind kind) {
    gm::ast::Position p;
    p.lineno = number();
    p.col_offset = number();
    p.end_lineno = number();
    p.end_col_offset = number();
    Field f[8];
    const auto fields = gm::ast::fields_of(kind);
    for (std::size_t i = 0; i < fields.size(); ++i) f[i] = read_value(fields[i].kind);
    if (token() != ")") fail("expected )");
    switch (fields.size()) {
      case 0: return tree_.add(kind, 0, 0, p, {});
      case 1: return tree_.add(kind, 0, 0, p, {f[0]});
      case 2: return tree_.add(kind, 0, 0, p, {f[0], f[1]});
      case 3: return tree_.add(kind, 0, 0, p, {f[0], f[1], f[2]});
      case 4: return tree_.add(kind, 0, 0, p, {f[0], f[1], f[2], f[3]});
      case 5: return tree_.add(kind, 0, 0, p, {f[0], f[1], f[2], f[3], f[4]});
      case 6: return tree_.add(kind, 0, 0, p, {f[0], f[1], f[2], f[3], f[4], f[5]});
      case 7: return tree_.add(kind, 0, 0, p, {f[0], f[1], f[2], f[3], f[4], f[5], f[6]});
      case 8: return tree_.add(kind, 0, 0, p, {f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]});
      default: fail("too many fields");
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  Tree& tree_;
};

int run_replay(const Options& opt) {
  std::string data, why;
  if (!read_file(opt.replay, data, why)) {
    std::fprintf(stderr, "gm_dump: cannot read %s: %s\n", opt.replay.c_str(), why.c_str());
    return 2;
  }
  std::FILE* out = open_out(opt);
  std::size_t pos = 0, count = 0;
  while (pos < data.size()) {
    std::size_t eol = data.find('\n', pos);
    if (eol == std::string::npos) break;
    if (data.compare(pos, 2, "@ ") != 0) {
      std::fprintf(stderr, "gm_dump: bad replay record at %zu\n", pos);
      return 2;
    }
    const std::string name = data.substr(pos + 2, eol - pos - 2);
    std::size_t end = data.find('\n', eol + 1);
    if (end == std::string::npos) end = data.size();
    const std::string_view body(data.data() + eol + 1, end - eol - 1);
    pos = end + 1;
    ++count;
    try {
      Tree tree;
      TreeReader reader(body, tree);
      const NodeId root = reader.read_root();
      tree.set_root(root);
      gm::ast::DumpOptions dopt;
      dopt.minor = opt.minor;
      dopt.include_attributes = opt.attributes;
      write_record(out, "OK", name, gm::ast::dump(tree, root, dopt));
    } catch (const std::exception& e) {
      write_record(out, "IOERR", name, e.what());
    }
  }
  write_record(out, "END", std::to_string(count), "");
  if (out != stdout) std::fclose(out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage("missing value");
      return argv[++i];
    };
    if (a == "--minor") {
      opt.minor = std::atoi(value().c_str());
      if (opt.minor < 8 || opt.minor > 13) usage("--minor must be 8..13");
    } else if (a == "--no-attributes") {
      opt.attributes = false;
    } else if (a == "--batch") {
      opt.batch = value();
    } else if (a == "--replay") {
      opt.replay = value();
    } else if (a == "--out") {
      opt.out = value();
    } else if (a == "-h" || a == "--help") {
      usage("help");
    } else if (a.size() > 1 && a[0] == '-' && a != "-") {
      usage(("unknown option " + std::string(a)).c_str());
    } else {
      opt.files.emplace_back(a);
    }
  }
  if (!opt.batch.empty()) return run_batch(opt);
  if (!opt.replay.empty()) return run_replay(opt);
  if (opt.files.empty()) usage("no input files");

  int rc = 0;
  std::string data, why;
  for (const auto& path : opt.files) {
    if (!read_file(path, data, why)) {
      std::fprintf(stderr, "gm_dump: cannot read %s: %s\n", path.c_str(), why.c_str());
      rc = 2;
      continue;
    }
    const Outcome r = dump_source(std::move(data), opt);
    if (r.ok) {
      std::fwrite(r.text.data(), 1, r.text.size(), stdout);
      std::fputc('\n', stdout);
    } else {
      std::printf("ERROR %s:%u:%u: %s: %s\n", path.c_str(), r.error.line, r.error.col + 1,
                  r.error.kind.c_str(), r.error.message.c_str());
      if (rc == 0) rc = 1;
    }
  }
  return rc;
}
