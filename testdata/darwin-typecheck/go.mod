module example.com/dtc

go 1.24

require example.com/vzfork v0.0.0

replace example.com/vzfork => ./vzfork
