// A CDK app for Stepwise's tests: one stack with a Python and a Node
// function, a DynamoDB table and a state machine built with the Step
// Functions constructs. It synthesizes offline, with no AWS account and no
// cdk CLI: `tsc`, then `CDK_OUTDIR=cdk.out node bin/app.js`.
import * as path from "path";
import { App, CfnOutput, Duration, RemovalPolicy, Stack, StackProps, Validations } from "aws-cdk-lib";
import * as dynamodb from "aws-cdk-lib/aws-dynamodb";
import * as lambda from "aws-cdk-lib/aws-lambda";
import * as sfn from "aws-cdk-lib/aws-stepfunctions";
import * as tasks from "aws-cdk-lib/aws-stepfunctions-tasks";
import { Construct } from "constructs";

class OrdersStack extends Stack {
  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);

    const table = new dynamodb.Table(this, "Orders", {
      partitionKey: { name: "pk", type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      removalPolicy: RemovalPolicy.DESTROY,
    });

    // Prices an order; raises OrderRejected for an order of no items.
    const price = new lambda.Function(this, "PriceOrder", {
      runtime: lambda.Runtime.PYTHON_3_12,
      handler: "price.handler",
      code: lambda.Code.fromAsset(path.join(__dirname, "..", "lambda")),
      timeout: Duration.seconds(10),
      memorySize: 256,
      environment: { TABLE_NAME: table.tableName, CURRENCY: "EUR" },
    });
    table.grantReadData(price);

    // Greets the customer: a Node function the state machine does not call.
    // Node 20 is the host's node; CloudFormation's validation warns that
    // AWS has deprecated the runtime.
    const greet = new lambda.Function(this, "Greet", {
      runtime: lambda.Runtime.NODEJS_20_X,
      handler: "index.handler",
      code: lambda.Code.fromAsset(path.join(__dirname, "..", "lambda-node")),
      timeout: Duration.seconds(5),
    });
    Validations.of(greet).acknowledge({ id: "CloudFormation-Validate::W2531", reason: "the tests run it with the host's node 20" });

    const priced = new tasks.LambdaInvoke(this, "Price", {
      lambdaFunction: price,
      payloadResponseOnly: true,
      resultPath: "$.priced",
    });
    const save = new tasks.DynamoPutItem(this, "Save", {
      table,
      item: {
        pk: tasks.DynamoAttributeValue.fromString(sfn.JsonPath.stringAt("$.orderId")),
        total: tasks.DynamoAttributeValue.numberFromString(sfn.JsonPath.format("{}", sfn.JsonPath.stringAt("$.priced.total"))),
      },
      resultPath: sfn.JsonPath.DISCARD,
    });
    const rejected = new sfn.Pass(this, "Rejected", {
      parameters: { "orderId.$": "$.orderId", status: "REJECTED", "error.$": "$.error.Error" },
    });
    priced.addCatch(rejected, { errors: ["OrderRejected"], resultPath: "$.error" });
    const done = new sfn.Pass(this, "Done", {
      parameters: { "orderId.$": "$.orderId", status: "SAVED", "total.$": "$.priced.total" },
    });

    const machine = new sfn.StateMachine(this, "OrderFlow", {
      definitionBody: sfn.DefinitionBody.fromChainable(priced.next(save).next(done)),
      timeout: Duration.minutes(5),
    });

    new CfnOutput(this, "StateMachineArn", { value: machine.stateMachineArn });
    new CfnOutput(this, "TableName", { value: table.tableName });
  }
}

const app = new App();
new OrdersStack(app, "StepwiseCdkApp", {
  description: "Stepwise's CDK test app: Lambda functions in Python and Node, a DynamoDB table, a state machine",
});
app.synth();
