package io.sparkkinesis.payload.dynamodb

import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpectsInputTypes, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.types.{DataType, StringType, StructType}
import org.apache.spark.unsafe.types.UTF8String

import io.sparkkinesis.errors.KinesisErrors

/**
 * `from_dynamodb_json(item, schema)`: a DynamoDB item in DynamoDB's typed JSON (a string: `keys`, `newImage`,
 * `oldImage` of a DynamoDB Streams record, or `$.dynamodb.NewImage` of a Kinesis Data Streams for DynamoDB record)
 * read into a struct of `schema` ([[DynamoDbJson]]). A null string gives a null struct; an item a field cannot hold
 * fails the query with [KINESIS_DYNAMODB_JSON_UNREADABLE], naming the row and the attribute.
 */
private[sparkkinesis] final case class FromDynamoDbJson(child: Expression, schema: StructType)
  extends UnaryExpression with ExpectsInputTypes with CodegenFallback {

  // Every field may be null: an attribute the item lacks, or {"NULL": true}.
  override lazy val dataType: DataType = DynamoDbFunctions.nullable(schema)
  override def nullable: Boolean = true
  override def inputTypes = Seq(StringType)
  override def prettyName: String = FromDynamoDbJson.Name

  @transient private lazy val reader = new DynamoDbJson(dataType.asInstanceOf[StructType])
  @transient private var rows = 0L

  override protected def nullSafeEval(input: Any): Any = {
    rows += 1
    try reader.read(input.asInstanceOf[UTF8String].toString)
    catch {
      case u: DynamoDbJson.Unreadable =>
        val where = Option(TaskContext.get()).fold(s"row $rows")(t =>
          s"row $rows of partition ${t.partitionId()} of stage ${t.stageId()}")
        throw KinesisErrors.dynamoDbJsonUnreadable(where,
          if (u.path.isEmpty) "the item" else s"attribute '${u.path}'", u.problem)
    }
  }

  override protected def withNewChildInternal(newChild: Expression): FromDynamoDbJson = copy(child = newChild)
}

private[sparkkinesis] object FromDynamoDbJson {
  val Name = "from_dynamodb_json"
}
