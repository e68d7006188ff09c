// main.cpp — flotilla-kernel: run one variant of a kernel family from the command line.
//
//   flotilla-kernel list | --help | <family> --help
//   flotilla-kernel <family> [--param value ...] [--verify [--shard S --shards N]]
// Prints human-readable lines, then ONE metrics line of flotilla's protocol, e.g.
//   flotilla-metric: gflops=12.5 time_s=0.0123 gbps=40.1
// Exit status (flotilla maps it to a trial status): 0 measured / verified, 1 verification or run
// failed, 2 bad arguments (the message names the option), 77 skipped (no usable GPU).
// A family's options are generated from its ParamDecls: parameter tile_x is option --tile-x.
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "flotilla/kernels/Family.h"
#include "flotilla/kernels/Run.h"
#include "flotilla/kernels/Runtime.h"

namespace po = boost::program_options;
namespace fk = flotilla::kernels;
using fk::option_name;

namespace {

// A bad command line: printed on stderr, exit 2.
struct UsageError {
  std::string message;
};

void print_usage(std::ostream& out) {
  out << "usage: flotilla-kernel <family> [--<param> <value> ...] [--verify [--shard S --shards N]]\n"
         "       flotilla-kernel <family> --help     the family's parameters\n"
         "       flotilla-kernel list                the kernel families\n"
         "       flotilla-kernel --help\n\n"
         "Runs one variant of a kernel family and prints one metrics line, e.g.\n"
         "  flotilla-metric: gflops=12.5 time_s=0.0123 gbps=40.1\n"
         "With --verify, checks shard S of N against the reference instead and prints\n"
         "  flotilla-metric: max_abs_error=...\n\n"
         "exit status: 0 ok, 1 verification or run failed, 2 bad arguments, 77 skipped (no GPU)\n\n"
         "families:\n";
  for (const fk::KernelFamily* family : fk::families()) {
    out << "  " << family->name() << "  " << family->description() << "\n";
  }
}

po::options_description family_options(const fk::KernelFamily& family) {
  po::options_description options(std::string(family.name()) + " options");
  for (const fk::ParamDecl& decl : family.params()) {
    options.add_options()(option_name(decl.name).c_str(),
                          po::value<std::string>()->default_value(decl.default_value),
                          (decl.description + "; " + decl.allowed_text()).c_str());
  }
  // clang-format off
  options.add_options()
      ("verify", "verify the variant against the reference instead of benchmarking it")
      ("shard", po::value<int>()->default_value(0), "with --verify: which shard of the rows to check")
      ("shards", po::value<int>()->default_value(1), "with --verify: how many shards the rows are split into")
      ("help,h", "show this help");
  // clang-format on
  return options;
}

fk::Params collect_params(const fk::KernelFamily& family, const po::variables_map& vm) {
  fk::Params params;
  for (const fk::ParamDecl& decl : family.params()) {
    params[decl.name] = vm[option_name(decl.name)].as<std::string>();
  }
  return params;
}

int run_family(const fk::KernelFamily& family, const std::vector<std::string>& args) {
  const po::options_description options = family_options(family);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(options).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError{e.what()};
  }
  if (vm.count("help")) {
    std::cout << "usage: flotilla-kernel " << family.name() << " [options]\n"
              << family.description() << "\n\n"
              << options;
    return fk::kExitOk;
  }
  if (!vm.count("verify") && (!vm["shard"].defaulted() || !vm["shards"].defaulted())) {
    throw UsageError{"options --shard and --shards need --verify"};
  }
  const fk::RunRequest request{std::string(family.name()), collect_params(family, vm), vm.count("verify") > 0,
                                vm["shard"].as<int>(), vm["shards"].as<int>()};
  fk::Runtime runtime;  // Kokkos lives exactly as long as the run
  const fk::RunReport report = fk::run_variant(request);  // shared with the MPI worker's in-process runs
  std::cout << report.out << std::flush;
  std::cerr << report.err;
  return report.exit_code;
}

int dispatch(const std::vector<std::string>& args) {
  if (args.empty()) throw UsageError{"no kernel family given (try 'flotilla-kernel list')"};
  const std::string& command = args.front();
  if (command == "--help" || command == "-h" || command == "help") {
    print_usage(std::cout);
    return fk::kExitOk;
  }
  if (command == "list") {
    if (args.size() > 1) throw UsageError{"'list' takes no arguments, got '" + args[1] + "'"};
    for (const fk::KernelFamily* family : fk::families()) {
      std::cout << family->name() << "\t" << family->description() << "\n";
    }
    return fk::kExitOk;
  }
  const fk::KernelFamily* family = fk::find_family(command);
  if (!family) throw UsageError{"unknown kernel family '" + command + "' (try 'flotilla-kernel list')"};
  return run_family(*family, std::vector<std::string>(args.begin() + 1, args.end()));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return dispatch(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const UsageError& e) {
    std::cerr << "flotilla-kernel: " << e.message << "\n";
    return fk::kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "flotilla-kernel: error: " << e.what() << "\n";
    return fk::kExitFailed;
  }
}
