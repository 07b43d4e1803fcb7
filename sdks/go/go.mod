module github.com/agentry/agentry-go

go 1.24
