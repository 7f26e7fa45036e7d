# latgen for an Argo CD Config Management Plugin sidecar (examples/argocd-cmp/): the static
# (musl) release binary on busybox, whose `sh` runs the plugin's generate command. About
# 13 MB. The release workflow builds it for linux/amd64 and linux/arm64 from the binaries
# it built, placed in dist/<arch>/latgen; to build one yourself:
#
#   cargo build --release --target x86_64-unknown-linux-musl   # needs musl-gcc (musl-tools) for jemalloc
#   mkdir -p dist/amd64 && cp target/x86_64-unknown-linux-musl/release/latgen dist/amd64/
#   docker build --platform linux/amd64 -t latgen .
FROM busybox:1.37-musl
ARG TARGETARCH
COPY dist/${TARGETARCH}/latgen /usr/local/bin/latgen
# The user Argo CD runs plugin sidecars as.
USER 999:999
ENTRYPOINT ["/usr/local/bin/latgen"]
