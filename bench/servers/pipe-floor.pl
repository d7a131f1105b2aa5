#!/usr/bin/perl
# The floor under every measurement: not an MCP server, just a process that
# answers each request line at once with a canned result, so that the
# driver's own cost and the two pipes can be told apart from a server's.
# A big_table call is answered with a pre-built line of 42 MB (about the
# size the servers send), the floor of the large-result scenario.
use strict;
use warnings;

$| = 1; # write each answer at once, as a server must
my $big = '"result":{"text":"' . ('x' x 42_000_000) . '"}}';

while (my $line = <STDIN>) {
    my ($id) = $line =~ /"id":(\d+)/ or next; # notifications get no answer
    if ($line =~ /"big_table(_open)?"/) {
        print '{"jsonrpc":"2.0","id":', $id, ',', $big, "\n";
    } else {
        print '{"jsonrpc":"2.0","id":', $id, ',"result":{}}', "\n";
    }
}
