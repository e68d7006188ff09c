// main.cpp — read_campaign FILE.h5: opens a campaign file with flotilla's installed results
// library (find_package(flotilla), flotilla::results) and prints what `flotilla results summary
// --json` says too: the candidate count and the winner, in a line the install test compares.
#include <flotilla/results/Analysis.h>
#include <flotilla/results/Store.h>

#include <exception>
#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: read_campaign FILE.h5\n";
    return 2;
  }
  try {
    const auto store = flotilla::results::Store::open_read(argv[1]);
    const auto summary = flotilla::results::summarize(store);
    std::cout << "campaign " << summary.campaign.name << " candidates " << summary.candidates.size() << " best ";
    if (summary.best)
      std::cout << summary.candidates[*summary.best].record.id << '\n';
    else
      std::cout << "none\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "read_campaign: " << e.what() << '\n';
    return 1;
  }
}
