// parse_speed: parser throughput and memory on a corpus held in memory.
//
//   parse_speed [--minor N] [--repeat R] [--threads T] [--json]
//               (--list LISTFILE | FILE...)
//
// Phases (each over the whole corpus, R times):
//   1. one thread: Source::decode + parse_module per file, results dropped;
//      each pass is timed on its own: the best pass is reported (the
//      statistic bench/parse_speed.py takes for CPython's ast.parse, best of
//      its timed passes), and the mean over all R passes beside it;
//   2. T threads (default: all cores), files handed out by an atomic counter;
//   3. memory: parse every file once on one thread and keep every result
//      alive; (peak RSS after - peak RSS before) / MB of source is the
//      memory a parsed file costs per MB of its text (tokens + tree).
// Peak RSS comes from getrusage(RUSAGE_SELF).ru_maxrss, which only grows, so
// phase 3 runs last. With --json, the last line is a JSON object for
// bench/parse_speed.py.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include "parser/parse.h"
#include "syntax/source.h"

namespace {

struct Input {
  std::string path;
  std::string bytes;
};

long peak_rss_kb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;  // kilobytes on Linux
}

bool read_file(const std::string& path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

// Parse one file; returns the number of nodes (0 on a syntax error), so the
// work cannot be optimised away.
std::size_t parse_one(const std::string& bytes, const gm::ParseOptions& options, bool* ok) {
  auto decoded = gm::Source::decode(bytes);
  if (std::holds_alternative<gm::SyntaxError>(decoded)) {
    *ok = false;
    return 0;
  }
  auto result = gm::parse_module(std::get<gm::Source>(decoded), options);
  *ok = !result.error;
  return result.tree.node_count();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

[[noreturn]] void usage(const char* msg) {
  std::fprintf(
      stderr,
      "parse_speed: %s\nusage: parse_speed [--minor N] [--repeat R] [--threads T] [--json] "
      "(--list LISTFILE | FILE...)\n",
      msg);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  int minor = 11, repeat = 3;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  bool json = false, memory = true;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage("missing value");
      return argv[++i];
    };
    if (a == "--minor") {
      minor = std::atoi(value().c_str());
    } else if (a == "--repeat") {
      repeat = std::max(1, std::atoi(value().c_str()));
    } else if (a == "--threads") {
      threads = static_cast<unsigned>(std::max(1, std::atoi(value().c_str())));
    } else if (a == "--json") {
      json = true;
    } else if (a == "--no-memory") {
      memory = false;
    } else if (a == "--list") {
      std::ifstream f(value());
      if (!f) usage("cannot read the list");
      std::string line;
      while (std::getline(f, line))
        if (!line.empty()) paths.push_back(line);
    } else if (!a.empty() && a[0] == '-') {
      usage("unknown option");
    } else {
      paths.emplace_back(a);
    }
  }
  if (paths.empty()) usage("no input files");

  std::vector<Input> inputs;
  inputs.reserve(paths.size());
  std::size_t total = 0;
  for (auto& p : paths) {
    Input in{p, {}};
    if (!read_file(p, in.bytes)) {
      std::fprintf(stderr, "parse_speed: cannot read %s\n", p.c_str());
      continue;
    }
    total += in.bytes.size();
    inputs.push_back(std::move(in));
  }
  const double mb = static_cast<double>(total) / 1e6;
  gm::ParseOptions options;
  options.version = {3, minor};

  const long rss_loaded = peak_rss_kb();

  // ---- 1. one thread
  std::size_t nodes = 0, rejected = 0;
  double t1 = 0, best1 = 0;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& in : inputs) {
      bool ok = true;
      nodes += parse_one(in.bytes, options, &ok);
      if (r == 0 && !ok) ++rejected;
    }
    const double t = seconds_since(t0);
    t1 += t;
    best1 = r == 0 ? t : std::min(best1, t);
  }
  const double mbps1 = mb / best1;
  const double mbps1_mean = mb * repeat / t1;
  const long rss_single = peak_rss_kb();

  // ---- 2. all cores
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> nodes_mt{0};
  const std::size_t jobs = inputs.size() * static_cast<std::size_t>(repeat);
  const auto t0 = std::chrono::steady_clock::now();
  {
    std::vector<std::thread> pool;
    for (unsigned k = 0; k < threads; ++k) {
      pool.emplace_back([&] {
        std::size_t local = 0;
        for (std::size_t j; (j = next.fetch_add(1, std::memory_order_relaxed)) < jobs;) {
          bool ok = true;
          local += parse_one(inputs[j % inputs.size()].bytes, options, &ok);
        }
        nodes_mt += local;
      });
    }
    for (auto& th : pool) th.join();
  }
  const double tn = seconds_since(t0);
  const double mbpsn = mb * repeat / tn;

  // ---- 3. memory: keep every parsed file alive
  double kb_per_mb = 0;
  long rss_before = 0, rss_after = 0;
  if (memory) {
    rss_before = peak_rss_kb();
    std::vector<gm::ParseResult> kept;
    std::vector<std::unique_ptr<gm::Source>> sources;
    kept.reserve(inputs.size());
    for (const auto& in : inputs) {
      auto decoded = gm::Source::decode(in.bytes);
      if (auto* s = std::get_if<gm::Source>(&decoded)) {
        sources.push_back(std::make_unique<gm::Source>(std::move(*s)));
        kept.push_back(gm::parse_module(*sources.back(), options));
      }
    }
    rss_after = peak_rss_kb();
    kb_per_mb = static_cast<double>(rss_after - rss_before) / mb;
  }

  std::printf("corpus: %zu files, %.2f MB, %zu rejected by 3.%d rules\n", inputs.size(), mb,
              rejected, minor);
  std::printf("1 thread : %8.2f MB/s  (best of %d passes: %.3f s; mean %.3f s = %.2f MB/s)\n",
              mbps1, repeat, best1, t1 / repeat, mbps1_mean);
  std::printf("%u threads: %8.2f MB/s  (%.3f s per pass, x%.2f of the 1-thread mean)\n", threads,
              mbpsn, tn / repeat, mbpsn / mbps1_mean);
  std::printf("peak RSS : %.1f MB with the corpus loaded, %.1f MB after the 1-thread pass\n",
              rss_loaded / 1024.0, rss_single / 1024.0);
  if (memory)
    std::printf(
        "memory   : %.2f MB per MB of source with every file's tokens and tree kept "
        "(%.1f MB for %.2f MB)\n",
        kb_per_mb / 1024.0, (rss_after - rss_before) / 1024.0, mb);
  std::printf("nodes    : %zu per pass\n", nodes / static_cast<std::size_t>(repeat));
  if (json)
    std::printf(
        "{\"files\": %zu, \"mb\": %.4f, \"rejected\": %zu, \"repeat\": %d, \"threads\": %u, "
        "\"mbps_1\": %.3f, \"mbps_1_mean\": %.3f, \"mbps_n\": %.3f, \"peak_rss_loaded_mb\": %.2f, "
        "\"peak_rss_1_mb\": %.2f, \"kept_mb_per_source_mb\": %.4f, \"nodes\": %zu}\n",
        inputs.size(), mb, rejected, repeat, threads, mbps1, mbps1_mean, mbpsn, rss_loaded / 1024.0,
        rss_single / 1024.0, kb_per_mb / 1024.0, nodes / static_cast<std::size_t>(repeat));
  return nodes_mt.load() == 0 && nodes == 0 ? 1 : 0;
}
