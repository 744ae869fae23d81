module example.com/dtc

go 1.24
