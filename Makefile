# Orchard's two everyday commands:
#   make run    the main job
#   make test   every test
# Both install the Debian packages they need when missing.

SWIFT ?= swift
BIN := .build/debug/orchard

.PHONY: run test deps build release format lint clean

deps:
	@./scripts/install-deps.sh

build: deps
	$(SWIFT) build --product orchard

release: deps
	$(SWIFT) build -c release --product orchard

run: build
	$(BIN) demo

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

format:
	$(SWIFT) format --in-place --recursive Package.swift Sources Tests

lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests

clean:
	rm -rf .build
