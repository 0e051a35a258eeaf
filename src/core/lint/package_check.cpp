#include "lint/package_check.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <variant>

#include "semantic/model.h"
#include "semantic/package.h"

namespace gm::lint {

namespace {

// Runs work(i) for every i < n on up to `jobs` threads, each taking the next
// unclaimed index (files differ in size by orders of magnitude).
template <class F>
void for_each_index(std::size_t n, int jobs, F work) {
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < n;) work(i);
  };
  const std::size_t n_threads =
      std::min<std::size_t>(std::max(1, jobs), std::max<std::size_t>(1, n / 16));
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < n_threads; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
}

struct FileState {
  bool parsed = false;
  bool own_regions = false;
  bool mentions = false;  // the text holds "graphmend" (maybe a suppression comment)
};

}  // namespace

std::vector<PackageFileResult> check_package(const std::vector<PackageFile>& files,
                                             const PackageOptions& options,
                                             const OnChecked& on_checked) {
  const std::size_t n = files.size();
  std::vector<PackageFileResult> out(n);
  std::vector<FileState> state(n);
  std::vector<sema::ModuleSummary> summaries(n);

  // 1. Each module alone: decode, parse, resolve names, summarise.
  sema::AnalyzeOptions summary_analysis;
  summary_analysis.facts = false;
  summary_analysis.region_nodes = false;
  for_each_index(n, options.jobs, [&](std::size_t i) {
    const PackageFile& f = files[i];
    summaries[i].module = f.module;
    auto decoded = Source::decode(std::string(f.bytes));
    if (auto* err = std::get_if<SyntaxError>(&decoded)) {
      out[i].decode_error = *err;
      return;
    }
    const Source& source = std::get<Source>(decoded);
    const ParseResult parsed = parse_module(source, options.parse);
    if (parsed.error) {
      if (f.check && on_checked) {
        CheckResult failed;
        failed.syntax_error = parsed.error;
        on_checked(i, source, std::move(failed));
      }
      return;
    }
    const sema::Model model = sema::analyze(parsed.tree, source, summary_analysis);
    state[i] = {true, !model.region_functions().empty(),
                source.text().find("graphmend") != std::string_view::npos};
    summaries[i] = sema::summarize(model, f.module, f.is_package);
  });

  // 2. The package: which functions compiled code anywhere reaches.
  auto roots = sema::package_roots(summaries, options.include_own);
  summaries.clear();

  // 3. The rules, per file, under its own regions and its roots.
  for_each_index(n, options.jobs, [&](std::size_t i) {
    PackageFileResult& r = out[i];
    const FileState& s = state[i];
    r.roots = std::move(roots[i]);
    if (!s.parsed) return;
    r.regions = s.own_regions || !r.roots.empty();
    if (!files[i].check || !on_checked) return;
    const auto decoded = Source::decode(std::string(files[i].bytes));
    const Source& source = std::get<Source>(decoded);  // it decoded in step 1
    if (!*r.regions && !s.mentions) {
      on_checked(i, source, CheckResult{});
      return;
    }
    LintOptions lint;
    lint.parse = options.parse;
    lint.selection = *files[i].check;
    sema::AnalyzeOptions analysis;
    analysis.extra_roots = r.roots;
    analysis.facts_need_regions = true;
    lint.build_model = [&analysis](const Source& src, const ParseResult& parsed) {
      return std::make_shared<const sema::Model>(sema::analyze(parsed.tree, src, analysis));
    };
    on_checked(i, source, check_source(source, lint));
  });
  return out;
}

}  // namespace gm::lint
