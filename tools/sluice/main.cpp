// sluice: the command line of the runtime's two device jobs, conformance testing and queue-level latency
// measurement, plus the device list and profiling. One subcommand per file (cli.h lists them). With
// $SLUICE_PROFILE set, runtime/profile.h writes the trace at exit.
#include <sluice/version.h>

#include <cstdio>
#include <exception>

#include "tools/sluice/cli.h"

int main(int argc, char** argv) {
  using namespace sluice::cli;
  CLI::App app{"sluice: run ONNX models; devices, conformance, latency, profiling"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Every subcommand's help");
  app.set_version_flag("--version", "sluice " SLUICE_VERSION_STRING, "Print the version and exit");
  int exit_code = 0;
  add_devices_command(app, exit_code);
  add_conformance_command(app, exit_code);
  add_latency_command(app, exit_code);
  add_profile_command(app, exit_code);
  add_run_command(app, exit_code);
  add_compile_command(app, exit_code);
  add_vad_command(app, exit_code);
  add_ocr_command(app, exit_code);
  add_train_command(app, exit_code);
  app.footer("Each subcommand's --help has examples.\n" +
             exit_codes_help("a check, a case or the work failed (see each subcommand)"));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) { return exit_on_parse_error(app, e); } catch (const UsageError& e) {
    return exit_on_error(app, e, kExitUsage);
  } catch (const std::exception& e) { return exit_on_error(app, e, kExitFailed); }
  return exit_code;
}
