# Orchard's two everyday commands:
#   make run    the main job: orchard serve in the background, then orchard demo against it (scripts/run.sh)
#   make stop   stops the server make run left running
#   make test   every test (scripts/test.sh: Swift tests, PostgreSQL, browser and API-fuzz stages)
# Both install the Debian packages they need when missing.

SWIFT ?= swift
BIN := .build/debug/orchard

.PHONY: run stop test deps build release format lint clean

deps:
	@./scripts/install-deps.sh

build: deps
	$(SWIFT) build --product orchard

release: deps
	$(SWIFT) build -c release --product orchard

run: build
	@ORCHARD_BIN=$(BIN) ./scripts/run.sh

stop:
	@./scripts/run.sh stop

test:
	@SWIFT=$(SWIFT) ./scripts/test.sh

format:
	$(SWIFT) format --in-place --recursive Package.swift Sources Tests

lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests

clean:
	rm -rf .build
