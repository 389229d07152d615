# Orchard's two everyday commands:
#   make run    the main job: orchard serve in the background, then orchard demo against it (scripts/run.sh)
#   make stop   stops the server make run left running
#   make test   every test (scripts/test.sh: Swift tests, PostgreSQL, docs and API check, browser, API-fuzz and
#               packaging stages)
# Both install the Debian packages they need when missing.
#   make release   the release binary, with the Swift runtime linked in (it runs wherever it is copied)
#   make install   installs it as a service: PREFIX=/usr/local DESTDIR=… (scripts/install.sh lists the paths)
#   make deb       orchard_<version>_<arch>.deb (scripts/build-deb.sh)
#   make docs      DocC archives of OrchardPay, ApplePayModel and ApplePayToken in .build/docs (scripts/docs.sh)
#   make api-check      OrchardPay's and ApplePayModel's public API against api/*.json (scripts/api-check.sh)
#   make api-baseline   rewrites api/*.json after an intended API change (commit it with the change)

SWIFT ?= swift
BIN := .build/debug/orchard
RELEASE_BIN := .build/release/orchard
PREFIX ?= /usr/local

.PHONY: run stop test deps build release install deb docs api-check api-baseline format lint clean

deps:
	@./scripts/install-deps.sh

build: deps
	$(SWIFT) build --product orchard

release: deps
	$(SWIFT) build -c release --static-swift-stdlib --product orchard

install: release
	@ORCHARD_BIN=$(RELEASE_BIN) PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) ./scripts/install.sh

deb: release
	@ORCHARD_BIN=$(RELEASE_BIN) ./scripts/build-deb.sh

run: build
	@ORCHARD_BIN=$(BIN) ./scripts/run.sh

stop:
	@./scripts/run.sh stop

test:
	@SWIFT=$(SWIFT) ./scripts/test.sh

docs: deps
	@SWIFT=$(SWIFT) ./scripts/docs.sh

api-check: deps
	@SWIFT=$(SWIFT) ./scripts/api-check.sh --self-test

api-baseline: deps
	@SWIFT=$(SWIFT) ./scripts/api-check.sh --update

format:
	$(SWIFT) format --in-place --recursive Package.swift Sources Tests

lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests

clean:
	rm -rf .build
