// results_writer.cpp — test helper: a separate process that writes a campaign file the way the
// scheduler does, so that tests can read it concurrently (SWMR) or SIGKILL it mid-campaign.
//
// Usage: results_writer create|append|grouped FILE N
// Creates FILE (or opens it for appending), prints "open", appends the sample trials
// [T, T + N) where T is the number already recorded, then prints "ready <total>". Each stdin
// line "more K" appends K more and prints "ready <total>" again. A line "group K" appends K more
// inside a Store::Group, prints "grouped <total>" and waits: the next line commits the group
// (then "ready <total>"). Mode grouped (create) appends the first N in groups of 50, each
// committed. At end of stdin it closes the file and exits 0. Without being killed it never
// exits with the file open. Mode opened: what a resume does first (Store::open_for_append), the
// file opened read-write in the latest format and not yet in SWMR mode, under the writer lock;
// prints "open" and stays there until killed or its stdin ends (then closes the file; N is ignored).
#include "test_records.h"

#include <hdf5.h>

#include "WriterLock.h"

#include <cstdlib>
#include <iostream>
#include <string>

using namespace flotilla::results;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: results_writer create|append FILE N\n";
    return 2;
  }
  try {
    const std::string mode = argv[1];
    if (mode == "opened") {
      const auto lock = WriterLock::acquire(argv[2]);
      const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
      H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
      const hid_t file = H5Fopen(argv[2], H5F_ACC_RDWR, fapl);
      if (file < 0) return 1;
      std::cout << "open" << std::endl;
      std::string line;
      while (std::getline(std::cin, line)) {
      }
      H5Fclose(file);
      return 0;
    }
    Store store = mode == "append" ? Store::open_for_append(argv[2])
                                   : Store::create(argv[2], testing::sample_campaign());
    std::cout << "open" << std::endl;
    auto total = static_cast<std::int64_t>(store.trials().size());
    std::int64_t count = std::atoll(argv[3]);
    if (mode == "grouped") {
      for (std::int64_t end = total + count; total < end; total += 50) {
        Store::Group group(store);
        testing::append_samples_in_group(store, total, 50);
        group.commit();
      }
      count = 0;
    }
    std::string command = "more";
    do {
      if (command == "group") {
        Store::Group group(store);
        testing::append_samples_in_group(store, total, count);
        total += count;
        std::cout << "grouped " << total << std::endl;
        std::string next;
        std::getline(std::cin >> std::ws, next);
        group.commit();
      } else {
        testing::append_samples(store, total, count);
        total += count;
      }
      std::cout << "ready " << total << std::endl;
    } while (std::cin >> command >> count && (command == "more" || command == "group"));
  } catch (const std::exception& error) {
    std::cerr << "results_writer: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
