// Package awsmodel is Stepwise's one set of AWS API models and their
// parser: botocore's (the AWS SDK for Python's) service-2.json format,
// reduced to what the code reads. Two users read the same embedded set:
//
//   - the aws-sdk integration (package awssdk) calls AWS with the whole
//     models of the services in Called (Models, which a directory of
//     models, STEPWISE_AWS_MODELS, extends or overrides);
//   - TestState (package apishape) checks a mocked result against the
//     output shape of its operation (Embedded): for the services in
//     Called, and for those in OutputsOnly, of which only the output
//     shapes ship.
//
// # The embedded set
//
// models/models.zip holds <service>.json.br files (botocore names): each
// model's JSON, brotli-compressed at its best, stored in the zip so that
// a model is read out of it alone, when asked for (Models and Embedded
// keep the models they parsed).
//
// The models come from botocore 1.43.11 (https://github.com/boto/botocore,
// botocore/data/<service>/<api version>/service-2.json, the newest API
// version); botocore is Apache-2.0, see models/NOTICE. The generator,
// ./gen (go run, nothing but Go), reads that data directory, keeps what
// Model's fields hold (for OutputsOnly: the operations' outputs and the
// shapes they reach) and writes the archive; the same sources give the
// same bytes.
//
// # Adding a service
//
//  1. Add its botocore name (the directory name under botocore/data) to
//     called in set.go if the aws-sdk integration is to call it with an
//     embedded model, or to checked if only TestState's shape checks need
//     it. The Step Functions name of a service (the AWS SDK for Java v2's
//     id, lower-cased) is botocore's without dashes; where it differs
//     otherwise, add it to modelNames here (the integration) and to
//     sdkServices in service/teststate/resource.go (TestState).
//
//  2. Regenerate the archive from a botocore data directory of the pinned
//     version: a clone of https://github.com/boto/botocore at tag 1.43.11
//     (its botocore/data), or an installed botocore
//     (python3 -c 'import botocore, os; print(os.path.dirname(botocore.__file__))',
//     then /data):
//
//     BOTOCORE_DATA=/path/to/botocore/data go generate ./integration/awssdk/awsmodel/
//
//     which runs, in this directory, go run ./gen -out models (-botocore
//     DIR names the directory instead of BOTOCORE_DATA). The generator
//     refuses a botocore of another version than botocoreVersion in
//     gen/main.go; moving to another version is changing it, the version
//     in models/NOTICE and above together, and regenerating: every model
//     may change, and the tests of awssdk and service/teststate tell
//     what moved.
//
//  3. Run go test ./integration/awssdk/... ./service/teststate/...:
//     TestEmbeddedSet checks that the archive holds exactly the listed
//     services and that each parses; add a case for the new service to
//     TestModels_embedded (awssdk) or TestValidate (apishape).
//
//  4. Check the size: du -b integration/awssdk/awsmodel/models (about
//     600 kB for 56 services). A whole model costs about as much as its
//     output shapes again.
//
// The package is pure: no I/O but the embedded archive and a model
// directory a caller names, no logging.
package awsmodel
