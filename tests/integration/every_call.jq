# The calls tests/progs/every_call made between its two markers
# (lseek(-1, 24301, 0)), by name, from `iotrail report --json --events`;
# "no two markers" when the recording does not hold both.
[.events[] | select(.comm == "every_call")] |
(map(.call == "lseek" and .offset == 24301) | indices(true)) as $m |
if ($m | length) == 2 then .[$m[0] + 1:$m[1]][] | .call else "no two markers" end
