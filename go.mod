module github.com/qoslab/qoslab

go 1.24.0

require (
	github.com/Code-Hex/vz/v3 v3.7.1
	github.com/cavaliergopher/cpio v1.0.1
	github.com/ebitengine/purego v0.9.0
	github.com/klauspost/compress v1.18.2
	github.com/mdlayher/vsock v1.2.1
	github.com/pierrec/lz4/v4 v4.1.22
	github.com/spf13/cobra v1.10.1
	github.com/spf13/pflag v1.0.10
	github.com/spf13/viper v1.21.0
	github.com/stretchr/testify v1.11.1
	github.com/ulikunitz/xz v0.5.17
	go.yaml.in/yaml/v3 v3.0.4
	golang.org/x/crypto v0.40.0
	golang.org/x/net v0.42.0
	golang.org/x/sys v0.37.0
	golang.org/x/term v0.36.0
	gonum.org/v1/plot v0.16.0
	google.golang.org/grpc v1.76.0
	google.golang.org/protobuf v1.36.10
	howett.net/plist v1.0.1
	pault.ag/go/debian v0.19.0
)

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.1.0 // indirect
	codeberg.org/go-pdf/fpdf v0.10.0 // indirect
	git.sr.ht/~sbinet/gg v0.6.0 // indirect
	github.com/Code-Hex/go-infinity-channel v1.0.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/campoy/embedmd v1.0.0 // indirect
	github.com/cpuguy83/go-md2man/v2 v2.0.6 // indirect
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/fsnotify/fsnotify v1.9.0 // indirect
	github.com/go-viper/mapstructure/v2 v2.4.0 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/kjk/lzma v0.0.0-20161016003348-3fd93898850d // indirect
	github.com/mdlayher/socket v0.4.1 // indirect
	github.com/pelletier/go-toml/v2 v2.2.4 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/sagikazarmark/locafero v0.11.0 // indirect
	github.com/sourcegraph/conc v0.3.1-0.20240121214520-5f936abd7ae8 // indirect
	github.com/spf13/afero v1.15.0 // indirect
	github.com/spf13/cast v1.10.0 // indirect
	github.com/subosito/gotenv v1.6.0 // indirect
	github.com/xi2/xz v0.0.0-20171230120015-48954b6210f8 // indirect
	golang.org/x/image v0.25.0 // indirect
	golang.org/x/mod v0.26.0 // indirect
	golang.org/x/sync v0.16.0 // indirect
	golang.org/x/text v0.28.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20250804133106-a7a43d27e69b // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
	pault.ag/go/topsort v0.1.1 // indirect
)

// vz v3.7.1 with the one fix qoslab needs (a descriptor closed twice); the
// folder's README.md gives the diff, the reason, and how to drop this line
// once a vz release has the fix.
replace github.com/Code-Hex/vz/v3 => ./internal/hv/vz/vzpatched
