module example.com/vzfork

go 1.24
