module github.com/agentry/agentry-go

go 1.24

require github.com/standard-webhooks/standard-webhooks/libraries v0.0.1
