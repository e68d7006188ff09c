# FlotillaHelpToMan.cmake — cmake -DPROGRAM=EXE -DNAME=flotilla-kernel -DSUMMARY=TEXT -DVERSION=V
# -DOUTPUT=FILE.1 -P FlotillaHelpToMan.cmake: a man page of a helper program from its own --help
# (run at build time, so the page says what the program says), its text kept as printed.
execute_process(COMMAND "${PROGRAM}" --help OUTPUT_VARIABLE help RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} --help exited ${status}")
endif()
string(REPLACE "\\" "\\e" help "${help}")
string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")   # no line starts a roff request
string(TOUPPER "${NAME}" upper)
string(REPLACE "-" "\\-" upper "${upper}")
string(REPLACE "-" "\\-" name "${NAME}")
file(WRITE "${OUTPUT}" ".TH ${upper} 1 \"\" \"flotilla ${VERSION}\" \"flotilla manual\"
.SH NAME
${name} \\- ${SUMMARY}
.SH DESCRIPTION
The output of \\fB${name} \\-\\-help\\fR:
.PP
.nf
${help}.fi
.SH SEE ALSO
\\fBflotilla\\fR(1), \\fBflotilla\\-run\\fR(1); docs/kernels.md under share/doc/flotilla of the installation.
")
